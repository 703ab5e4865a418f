import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { OnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { gatewayBin } from "../support/start-script.ts";
import { cliEnv, repoRoot, TestDatabase } from "./cli-support.ts";

describe("gateway worker", { timeout: 60_000 }, () => {
  let db: TestDatabase;
  let onec: OnecEmulator;

  beforeEach(async () => {
    db = new TestDatabase();
    onec = await startOnecEmulator();
  });
  afterEach(async () => {
    await onec.close();
    await db.remove();
  });

  it("delivers pending events to 1C without an HTTP server, and stops cleanly on SIGTERM", async () => {
    const eventIds = [await db.pending(), await db.pending(), await db.pending()];
    await db.close();
    const committed = new Promise<void>((resolve) => {
      onec.events.on("committed", () => {
        if (onec.orders().length === eventIds.length) resolve();
      });
    });

    const worker = spawn(process.execPath, [gatewayBin(), "worker"], {
      cwd: repoRoot,
      env: cliEnv({ ...db.env, ONEC_URL: onec.url, DELIVERY_POLL_MS: "50", LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    worker.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    worker.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = once(worker, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    const early = exited.then(([code]) => {
      throw new Error(`worker exited with ${code} before delivering:\n${output}`);
    });

    await Promise.race([committed, early]);
    expect(output).toMatch(/worker started/);
    worker.kill("SIGTERM");
    const [code, signal] = await exited;

    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output).toMatch(/worker stopped/);
    expect(onec.orders()).toHaveLength(3);
    for (const eventId of eventIds) {
      expect((await db.find(eventId))?.status).toBe(EventStatus.SUCCEEDED);
    }
  });

  it("shares one database with another worker: 40 events, each delivered once, none claimed twice", async () => {
    const eventIds: string[] = [];
    for (let i = 0; i < 40; i++) eventIds.push(await db.pending());
    await db.close();
    onec.setFaults({ latencyMs: 50 });
    const allCommitted = new Promise<void>((resolve) => {
      onec.events.on("committed", () => {
        if (onec.orders().length === eventIds.length) resolve();
      });
    });
    const workers = [0, 1].map(() =>
      spawn(process.execPath, [gatewayBin(), "worker"], {
        cwd: repoRoot,
        env: cliEnv({ ...db.env, ONEC_URL: onec.url, DELIVERY_POLL_MS: "20", LOG_LEVEL: "warn" }),
        stdio: "ignore",
      }),
    );
    try {
      await allCommitted;
    } finally {
      const exits = workers.map((w) => once(w, "exit"));
      for (const w of workers) w.kill("SIGTERM");
      await Promise.all(exits);
    }
    // The emulator keeps one order per key whatever it is sent: its POST count is what shows that no
    // event was sent twice (a second claim of one would be a second POST).
    expect(onec.postCount()).toBe(40);
    expect(
      onec
        .orders()
        .map((o) => o.key)
        .sort(),
    ).toEqual([...eventIds].sort());
    for (const eventId of eventIds) {
      expect(await db.find(eventId)).toMatchObject({ status: EventStatus.SUCCEEDED, attempts: 1 });
    }
  });
});
