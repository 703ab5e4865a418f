import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp.ts";

const repoRoot = new URL("../..", import.meta.url).pathname;

/** Runs the fixture with its standard output in a file: how it ended, and what it wrote. */
async function logThen(ending: "kill" | "exit", count: number) {
  const dir = tempDir("log-kill-");
  const outFile = join(dir.path, "stdout.log");
  const out = openSync(outFile, "w");
  const fixture = "test/process/fixtures/log-then-kill.ts";
  const child = spawn(process.execPath, ["--import", "tsx", fixture, String(count), ending], {
    cwd: repoRoot,
    stdio: ["ignore", out, "inherit"],
  });
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  closeSync(out);
  const text = readFileSync(outFile, "utf8");
  dir.remove();
  return { code, signal, text };
}

/**
 * pino's default for standard output writes in libuv's pool, later: a SIGKILL
 * loses what is queued (1848 of these 2000 lines when this test ran against it).
 */
describe("the gateway's log on standard output", () => {
  it("holds every line logged before a SIGKILL that came once the turn had ended, in order", async () => {
    const count = 2000;
    const { code, signal, text } = await logThen("kill", count);
    expect([code, signal]).toEqual([null, "SIGKILL"]);
    const lines = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { line: number; msg: string });
    expect(lines.map((line) => line.line)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(lines.every((line) => line.msg === "request completed")).toBe(true);
  });

  it("holds every line logged in the very turn the process exits in", async () => {
    const { code, text } = await logThen("exit", 50);
    expect(code).toBe(0);
    expect(text.trimEnd().split("\n")).toHaveLength(50);
  });
});
