import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { EventRegister, Lease, Settlement } from "../../src/register/port.ts";
import { Purger } from "../../src/retention/purger.ts";
import { siteOrderOf, T0 } from "../support/records.ts";
import { registerBackends, registerPerTest } from "../support/register-backends.ts";

const DAY = 86_400_000;
const RETENTION = 30 * DAY;
const NOW = T0 + 60 * DAY;
const CUTOFF = NOW - RETENTION;
/** Finished well before the cut-off. */
const OLD = T0;
/** Finished after it. */
const YOUNG = NOW - DAY;

const SUCCEEDED: Settlement = {
  status: EventStatus.SUCCEEDED,
  order: { id: "o-1", number: "ORD-1" },
  response: { status: 201, body: "{}" },
};
const FAILED_FINAL: Settlement = {
  status: EventStatus.FAILED_FINAL,
  error: "1C refused: unknown SKU",
  errorClass: "onec_rejected",
  response: { status: 422, body: "{}" },
};
const retryable = (at: number): Settlement => ({
  status: EventStatus.FAILED_RETRYABLE,
  error: "http_503: busy",
  errorClass: "http_503",
  nextAttemptAt: at + 60_000,
  charged: true,
});

describe.each(registerBackends())("retention on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  async function reserve(eventId: string, at: number): Promise<void> {
    await register.reserve({
      sender: "default",
      eventId,
      fingerprint: `fp-${eventId}`,
      policyVersion: "v1",
      body: "{}",
      ...siteOrderOf("{}"),
      correlationId: `c-${eventId}`,
      now: at,
    });
  }

  async function claim(eventId: string, at: number): Promise<Lease> {
    const batch = await register.claim({
      owner: "test",
      now: at,
      leaseMs: 1000,
      limit: 1,
      only: { sender: "default", eventId },
    });
    const claimed = batch[0];
    if (claimed === undefined) throw new Error(`could not claim ${eventId}`);
    return claimed.lease;
  }

  async function attempt(eventId: string, settlement: Settlement, at: number): Promise<void> {
    const lease = await claim(eventId, at);
    const settled = await register.settle(lease, settlement, { startedAt: at, durationMs: 1, outcome: "x" }, at);
    if (settled === undefined) throw new Error(`could not settle ${eventId}`);
  }

  /** An event received and finished at `at`, after one attempt. */
  async function finished(eventId: string, settlement: Settlement, at: number): Promise<string> {
    await reserve(eventId, at);
    await attempt(eventId, settlement, at);
    return eventId;
  }

  async function remaining(): Promise<string[]> {
    const all = await Promise.all(Object.values(EventStatus).map((status) => register.list({ status, limit: 1000 })));
    return all
      .flat()
      .map((record) => record.eventId)
      .sort();
  }

  /** Rows per table for one event, read with plain SQL, past the register's own API. */
  async function rowsOf(eventId: string): Promise<{ attempts: number; replays: number }> {
    return {
      attempts: await backend.rowCount("delivery_attempts", eventId),
      replays: await backend.rowCount("event_replays", eventId),
    };
  }

  function purger(options: { batchSize?: number; intervalMs?: number; log?: pino.Logger } = {}): Purger {
    return new Purger({
      register,
      now: () => NOW,
      log: options.log ?? pino({ level: "silent" }),
      retentionMs: RETENTION,
      batchSize: options.batchSize ?? 500,
      intervalMs: options.intervalMs ?? 3_600_000,
    });
  }

  it("purges old SUCCEEDED events only; FAILED_FINAL ones of that age only when asked; pending events of any age stay", async () => {
    await finished("old-succeeded", SUCCEEDED, OLD);
    await finished("old-final", FAILED_FINAL, OLD);
    await finished("at-cutoff", SUCCEEDED, CUTOFF);
    await finished("young-succeeded", SUCCEEDED, YOUNG);
    await finished("young-final", FAILED_FINAL, YOUNG);
    await reserve("old-processing", OLD);
    await reserve("old-processing-leased", OLD);
    await claim("old-processing-leased", OLD);
    await finished("old-retryable", retryable(OLD), OLD);

    expect(await register.countFinished({ olderThan: CUTOFF })).toBe(1);
    expect(await register.purgeFinished({ olderThan: CUTOFF, batchSize: 100 })).toBe(1);
    const pending = ["old-processing", "old-processing-leased", "old-retryable"];
    expect(await remaining()).toEqual(["at-cutoff", "old-final", ...pending, "young-final", "young-succeeded"]);
    expect(await register.purgeFinished({ olderThan: CUTOFF, batchSize: 100 })).toBe(0);

    // Support gave the old FAILED_FINAL event up.
    expect(await register.countFinished({ olderThan: CUTOFF, includeFailed: true })).toBe(1);
    expect(await register.purgeFinished({ olderThan: CUTOFF, batchSize: 100, includeFailed: true })).toBe(1);
    expect(await remaining()).toEqual(["at-cutoff", ...pending, "young-final", "young-succeeded"]);

    // Even a cut-off in the future never reaches a pending event, nor a FAILED_FINAL one unless asked.
    expect(await register.purgeFinished({ olderThan: NOW * 2, batchSize: 100 })).toBe(2);
    expect(await remaining()).toEqual([...pending, "young-final"]);
    expect(await register.purgeFinished({ olderThan: NOW * 2, batchSize: 100, includeFailed: true })).toBe(1);
    expect(await remaining()).toEqual(pending);
  });

  it("measures age from when the event finished, not when it was received", async () => {
    await reserve("slow", OLD);
    await attempt("slow", retryable(OLD), OLD);
    await attempt("slow", SUCCEEDED, YOUNG);
    // Replayed long after it failed: the replay restarts its clock.
    await finished("replayed", FAILED_FINAL, OLD);
    await register.replay({
      sender: "default",
      eventId: "replayed",
      requestedBy: "a",
      reason: "r",
      force: false,
      now: YOUNG,
    });
    await attempt("replayed", FAILED_FINAL, YOUNG);

    expect(await register.purgeFinished({ olderThan: CUTOFF, batchSize: 100 })).toBe(0);
    expect(await remaining()).toEqual(["replayed", "slow"]);
  });

  it("takes the attempts and replays of a purged event with it", async () => {
    await finished("gone", FAILED_FINAL, OLD - 2);
    await register.replay({
      sender: "default",
      eventId: "gone",
      requestedBy: "a",
      reason: "r",
      force: false,
      now: OLD - 1,
    });
    await attempt("gone", SUCCEEDED, OLD);
    await finished("kept", FAILED_FINAL, YOUNG - 1);
    await register.replay({
      sender: "default",
      eventId: "kept",
      requestedBy: "a",
      reason: "r",
      force: false,
      now: YOUNG,
    });
    expect(await rowsOf("gone")).toEqual({ attempts: 2, replays: 1 });

    expect(await register.purgeFinished({ olderThan: CUTOFF, batchSize: 100 })).toBe(1);

    expect(await rowsOf("gone")).toEqual({ attempts: 0, replays: 0 });
    expect(await rowsOf("kept")).toEqual({ attempts: 1, replays: 1 });
  });

  it("deletes at most one batch per call, and runOnce loops until a batch comes back short", async () => {
    for (let i = 0; i < 5; i += 1) await finished(`old-${i}`, SUCCEEDED, OLD + i);
    await finished("young", SUCCEEDED, YOUNG);

    expect(await register.purgeFinished({ olderThan: CUTOFF, batchSize: 2 })).toBe(2);
    expect(await register.countFinished({ olderThan: CUTOFF })).toBe(3);

    for (let i = 5; i < 7; i += 1) await finished(`old-${i}`, SUCCEEDED, OLD + i);
    const calls = vi.spyOn(register, "purgeFinished");
    expect(await purger({ batchSize: 2 }).runOnce()).toBe(5);
    expect(calls.mock.results.length).toBe(3);
    expect(await remaining()).toEqual(["young"]);
  });

  it("runs on its own every interval, keeps FAILED_FINAL events for support, and logs what it purged", async () => {
    const lines: { msg: string; purged?: number; component?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const periodic = purger({ intervalMs: 20, log: pino({ level: "info" }, sink) });
    const nextRun = () => new Promise<number>((resolve) => periodic.once("purged", resolve));
    await finished("old-1", SUCCEEDED, OLD);
    await finished("old-2", FAILED_FINAL, OLD);
    await finished("young", SUCCEEDED, YOUNG);

    const first = nextRun();
    periodic.start();
    try {
      expect(await first).toBe(1);
      await finished("old-3", SUCCEEDED, OLD);
      // A run may have started before old-3 was written: wait until one has taken it.
      let purged = 0;
      while (purged === 0) purged = await nextRun();
      expect(purged).toBe(1);
    } finally {
      await periodic.stop();
    }
    expect(await remaining()).toEqual(["old-2", "young"]);
    expect(lines.filter((line) => line.purged !== undefined)).toMatchObject([
      { component: "purger", purged: 1, msg: "purged finished events" },
      { component: "purger", purged: 1, msg: "purged finished events" },
    ]);
  });

  it("removes the console's expired sessions on every run, and keeps the live ones", async () => {
    const session = { operator: "anna", credentialDigest: "c", csrfToken: "t", idleMs: NOW - OLD + 1 };
    await register.sessions.create({ ...session, idDigest: "expired", maxMs: NOW - 1 - OLD }, OLD);
    await register.sessions.create({ ...session, idDigest: "at-expiry", maxMs: NOW - OLD }, OLD);
    await register.sessions.create({ ...session, idDigest: "live", maxMs: NOW + 1 - OLD }, OLD);

    await purger().runOnce();

    // Nothing expired is left for another purge to count.
    expect(await register.sessions.purgeExpired(NOW)).toBe(0);
    expect(await register.sessions.find("live", NOW)).toMatchObject({ idDigest: "live", operator: "anna" });
  });

  it("stop() ends a running purge at the next batch boundary and waits for it", async () => {
    for (let i = 0; i < 5; i += 1) await finished(`old-${i}`, SUCCEEDED, OLD);
    const oneByOne = purger({ batchSize: 1 });
    let result: number | undefined;
    const run = oneByOne.runOnce().then((purged) => {
      result = purged;
    });
    await oneByOne.stop();
    expect(result).toBe(1);
    await run;
    expect(await register.countFinished({ olderThan: CUTOFF })).toBe(4);
    // A run asked for after stop() is a new run: it goes to the end.
    expect(await oneByOne.runOnce()).toBe(4);
  });
});

describe("retention settings", () => {
  it("reads RETENTION_HOURS and PURGE_INTERVAL_MS, 30 days and 1 h by default, never under a day", () => {
    const base = { ONEC_URL: "http://1c.local" };
    expect(loadConfig(base)).toMatchObject({ retentionMs: 720 * 3_600_000, purgeIntervalMs: 3_600_000 });
    expect(loadConfig({ ...base, RETENTION_HOURS: "48", PURGE_INTERVAL_MS: "60000" })).toMatchObject({
      retentionMs: 48 * 3_600_000,
      purgeIntervalMs: 60_000,
    });
    expect(() => loadConfig({ ...base, RETENTION_HOURS: "23" })).toThrow(
      /^RETENTION_HOURS must be a whole number from 24 to /,
    );
    expect(() => loadConfig({ ...base, PURGE_INTERVAL_MS: "999" })).toThrow(/^PURGE_INTERVAL_MS/);
  });
});
