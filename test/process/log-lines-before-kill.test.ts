import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp.ts";

const repoRoot = new URL("../..", import.meta.url).pathname;

describe("the gateway's log on standard output", () => {
  it("holds every line logged before a SIGKILL, in order: each is written as it is logged", async () => {
    const dir = tempDir("log-kill-");
    const outFile = join(dir.path, "stdout.log");
    const out = openSync(outFile, "w");
    const count = 2000;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/process/fixtures/log-then-kill.ts", String(count)],
      {
        cwd: repoRoot,
        stdio: ["ignore", out, "inherit"],
      },
    );
    const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    closeSync(out);
    expect([code, signal]).toEqual([null, "SIGKILL"]);
    const lines = readFileSync(outFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { line: number; msg: string });
    expect(lines.map((line) => line.line)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(lines.every((line) => line.msg === "request completed")).toBe(true);
    dir.remove();
  });
});
