import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROBLEM_CODES, problems } from "../../src/errors/catalogue.ts";

/**
 * docs/api.md's problem-type table is what a client's developer reads to
 * handle each answer: every problem the gateway can send is a row there, with
 * the status and code the answer carries. A newcomer found three missing.
 */
const apiDoc = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
const rows = new Map<string, { status: number; code: string }>(
  [...apiDoc.matchAll(/^\| `([a-z-]+)` \| (\d{3}) \| `(GW_ERR_[A-Z_]+)` \|/gm)].map((match) => [
    String(match[1]),
    { status: Number(match[2]), code: String(match[3]) },
  ]),
);

describe("docs/api.md's problem types", () => {
  it.each(PROBLEM_CODES)("lists %s with its status and slug", (code) => {
    const problem = problems[code];
    expect(rows.get(problem.slug), `no row for ${problem.slug}`).toEqual({ status: problem.status, code });
  });

  it("lists no problem the gateway cannot send", () => {
    const slugs = new Set<string>(PROBLEM_CODES.map((code) => problems[code].slug));
    expect([...rows.keys()].filter((slug) => !slugs.has(slug))).toEqual([]);
  });
});
