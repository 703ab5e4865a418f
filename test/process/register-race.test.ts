import { spawn } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { tempDir } from "../support/temp.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;

function startWorker(file: string, owner: string, count: number, offset: number) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/process/fixtures/reserve-worker.ts", file, owner, String(count), String(offset)],
    {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  let out = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
    if (out.startsWith("ready\n")) markReady();
  });
  const done = new Promise<{ owner: string; created: number; startedAt: number; finishedAt: number }>(
    (resolve, reject) =>
      child.once("exit", (code) =>
        code === 0 ? resolve(JSON.parse(out.slice("ready\n".length))) : reject(new Error(`worker exit ${code}`)),
      ),
  );
  return { child, ready, done };
}

describe("reservation across processes on one SQLite file", { timeout: 60_000 }, () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it("creates each of 1000 keys exactly once when 4 processes race for all of them", async () => {
    const file = join(dir.path, "race.db");
    await new SqliteRegister(file).close();
    const workers = ["p1", "p2", "p3", "p4"].map((owner, k) => startWorker(file, owner, 1000, k * 250));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.child.stdin.end("go\n");
    const results = await Promise.all(workers.map((w) => w.done));

    expect(results.reduce((sum, r) => sum + r.created, 0)).toBe(1000);
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare("SELECT count(*) AS n, count(DISTINCT event_id) AS d FROM inbound_events").get() as {
        n: number;
        d: number;
      };
      expect(rows).toEqual({ n: 1000, d: 1000 });
    } finally {
      db.close();
    }
    // The race was real: every process was still reserving when the last one began.
    expect(Math.max(...results.map((r) => r.startedAt))).toBeLessThan(Math.min(...results.map((r) => r.finishedAt)));
  });
});
