import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseBsl } from "./bsl-parser/parser.ts";

/**
 * The BSL examples of the API reference (docs/api.md: polling the gateway
 * from 1C) are meant to be pasted into a module: each ```bsl block must parse
 * with the same parser that checks the extension's modules.
 */
const reference = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
const blocks = [...reference.matchAll(/```bsl\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");

describe("docs/api.md: BSL examples", () => {
  it("has the example of polling a status from 1C", () => {
    expect(blocks.some((block) => block.includes("/integration/v1/admin/events/"))).toBe(true);
  });

  it.each(blocks.map((block, index) => [index + 1, block]))("block %i parses as a BSL module", (_, block) => {
    const result = parseBsl(String(block));
    expect(result.ok ? "ok" : `${result.problem.line}: ${result.problem.message}`).toBe("ok");
  });

  it("would catch a broken example", () => {
    const broken = (blocks[0] ?? "").replace("КонецЕсли;", "");
    expect(parseBsl(broken).ok).toBe(false);
  });
});
