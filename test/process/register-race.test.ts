import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processBackends, registerDatabases } from "../support/process-backends.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;

function startWorker(databaseUrl: string, owner: string, count: number, offset: number) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/process/fixtures/reserve-worker.ts", databaseUrl, owner, String(count), String(offset)],
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

describe.each(processBackends())(
  "reservation across processes on one $name register",
  { timeout: 60_000 },
  (backend) => {
    const databases = registerDatabases(backend);

    it("creates each of 1000 keys exactly once when 4 processes race for all of them", async () => {
      const databaseUrl = await databases.create();
      // Migrated before the race, so the workers race on reservations only.
      const register = await databases.open(databaseUrl);
      const workers = ["p1", "p2", "p3", "p4"].map((owner, k) => startWorker(databaseUrl, owner, 1000, k * 250));
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.child.stdin.end("go\n");
      const results = await Promise.all(workers.map((w) => w.done));

      expect(results.reduce((sum, r) => sum + r.created, 0)).toBe(1000);
      const rows = await register.list({ limit: 1001 });
      expect({ n: rows.length, d: new Set(rows.map((r) => r.eventId)).size }).toEqual({ n: 1000, d: 1000 });
      // The race was real: every process was still reserving when the last one began.
      expect(Math.max(...results.map((r) => r.startedAt))).toBeLessThan(Math.min(...results.map((r) => r.finishedAt)));
    });
  },
);
