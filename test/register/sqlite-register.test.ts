import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/register/event-status.ts";
import {
  type AttemptReport,
  type Claim,
  type ClaimRequest,
  type ReserveRequest,
  StorageUnavailableError,
} from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { T0 } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

function reserveRequest(patch: Partial<ReserveRequest> = {}): ReserveRequest {
  return {
    sender: "default",
    eventId: "evt-1",
    fingerprint: "fp-1",
    policyVersion: "v1",
    body: '{"a":1}',
    correlationId: "c-1",
    now: T0,
    ...patch,
  };
}

function claimRequest(patch: Partial<ClaimRequest> = {}): ClaimRequest {
  return { owner: "worker-a", now: T0, leaseMs: 1000, limit: 10, ...patch };
}

const order = { id: "o-1", number: "ORD-1" };
const snapshot = { status: 201, body: '{"ok":true}' };
const report: AttemptReport = { startedAt: T0, durationMs: 12, outcome: "delivered", httpStatus: 201 };

describe("SqliteRegister", () => {
  let dir: ReturnType<typeof tempDir>;
  let register: SqliteRegister;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, "register.db");
    register = new SqliteRegister(file);
  });
  afterEach(async () => {
    await register.close();
    dir.remove();
  });

  async function claimOne(patch: Partial<ClaimRequest> = {}): Promise<Claim> {
    const batch = await register.claim(claimRequest(patch));
    const claim = batch[0];
    if (claim === undefined) throw new Error("nothing claimed");
    return claim;
  }

  it("records an event once, due at once, with no lease", async () => {
    const created = await register.reserve(reserveRequest());
    expect(created.outcome).toBe("created");
    expect(created.record).toMatchObject({ status: "PROCESSING", attempts: 0, leaseOwner: null, nextAttemptAt: T0 });
    const again = await register.reserve(reserveRequest({ fingerprint: "fp-2", now: T0 + 10 }));
    expect(again.outcome).toBe("existing");
    expect(again.record.fingerprint).toBe("fp-1");
  });

  it("claims due events under a lease, oldest first, and never the same one twice while leased", async () => {
    await register.reserve(reserveRequest({ eventId: "b", now: T0 + 1 }));
    await register.reserve(reserveRequest({ eventId: "a", now: T0 }));
    await register.reserve(reserveRequest({ eventId: "later", now: T0 + 5000 }));
    const first = await register.claim(claimRequest({ now: T0 + 10, limit: 10 }));
    expect(first.map((c) => c.record.eventId)).toEqual(["a", "b"]);
    expect(first.map((c) => [c.lease.token, c.record.attempts, c.record.leaseUntil])).toEqual([
      [1, 1, T0 + 1010],
      [1, 1, T0 + 1010],
    ]);
    expect(await register.claim(claimRequest({ owner: "worker-b", now: T0 + 20 }))).toEqual([]);
    const attempts = await register.listAttempts("default", "a");
    expect(attempts).toMatchObject([
      { attempt: 1, leaseToken: 1, worker: "worker-a", outcome: null, finishedAt: null },
    ]);
  });

  it("claims one given event when asked, and only if it is due", async () => {
    await register.reserve(reserveRequest({ eventId: "x" }));
    await register.reserve(reserveRequest({ eventId: "y" }));
    const only = await register.claim(claimRequest({ only: { sender: "default", eventId: "y" } }));
    expect(only.map((c) => c.record.eventId)).toEqual(["y"]);
    expect(await register.claim(claimRequest({ only: { sender: "default", eventId: "y" } }))).toEqual([]);
  });

  it("lets a new claim take over an expired lease, and fences the old holder out", async () => {
    await register.reserve(reserveRequest());
    const stale = await claimOne();
    const fresh = await claimOne({ owner: "worker-b", now: T0 + 1001 });
    expect([fresh.lease.token, fresh.record.attempts]).toEqual([2, 2]);

    // The stale holder finishes late: its outcome must not land on the event.
    const late = await register.settle(
      stale.lease,
      { status: EventStatus.SUCCEEDED, order, response: snapshot },
      report,
      T0 + 1100,
    );
    expect(late).toBeUndefined();
    const settled = await register.settle(
      fresh.lease,
      {
        status: EventStatus.FAILED_RETRYABLE,
        error: "http_503: busy",
        errorClass: "http_503",
        nextAttemptAt: T0 + 5000,
        charged: true,
      },
      { startedAt: T0 + 1001, durationMs: 5, outcome: "retryable", httpStatus: 503, errorClass: "http_503" },
      T0 + 1200,
    );
    expect(settled).toMatchObject({
      status: "FAILED_RETRYABLE",
      leaseUntil: null,
      nextAttemptAt: T0 + 5000,
      order: null,
    });
    // Both attempts are in the history; the stale one says it was not applied.
    const history = await register.listAttempts("default", "evt-1");
    expect(history.map((a) => [a.leaseToken, a.outcome, a.applied])).toEqual([
      [1, "delivered", false],
      [2, "retryable", true],
    ]);
  });

  it("waits for next_attempt_at before claiming a retryable event again", async () => {
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    await register.settle(
      claim.lease,
      {
        status: EventStatus.FAILED_RETRYABLE,
        error: "x",
        errorClass: "timeout",
        nextAttemptAt: T0 + 3000,
        charged: true,
      },
      report,
      T0,
    );
    expect(await register.claim(claimRequest({ now: T0 + 2999 }))).toEqual([]);
    const again = await claimOne({ now: T0 + 3000 });
    expect(again.record).toMatchObject({ status: "PROCESSING", attempts: 2, roundAttempts: 2, finishedAttempts: 1 });
  });

  it("refunds an attempt the event is not to blame for", async () => {
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    const settled = await register.settle(
      claim.lease,
      {
        status: EventStatus.FAILED_RETRYABLE,
        error: "401",
        errorClass: "onec_unauthorized",
        nextAttemptAt: T0,
        charged: false,
      },
      report,
      T0,
    );
    expect(settled).toMatchObject({ attempts: 1, roundAttempts: 0 });
  });

  it("tells watchers of what was committed: recorded, replayed, settled; not a repeat or a fenced-out settle", async () => {
    const changes: string[] = [];
    const unwatch = register.watch((change) => {
      changes.push(`${change.kind} ${change.eventId} ${change.status}`);
    });
    await register.reserve(reserveRequest());
    await register.reserve(reserveRequest({ now: T0 + 1 }));
    const stale = await claimOne();
    const fresh = await claimOne({ owner: "worker-b", now: T0 + 1001 });
    const final = { status: EventStatus.FAILED_FINAL, error: "x", errorClass: "x", response: snapshot } as const;
    expect(await register.settle(stale.lease, final, report, T0 + 1002)).toBeUndefined();
    await register.settle(fresh.lease, final, report, T0 + 1003);
    await register.replay({
      sender: "default",
      eventId: "evt-1",
      requestedBy: "t",
      reason: "r",
      force: false,
      now: T0 + 2000,
    });
    unwatch();
    await register.reserve(reserveRequest({ eventId: "after-unwatch" }));
    expect(changes).toEqual(["recorded evt-1 PROCESSING", "settled evt-1 FAILED_FINAL", "replayed evt-1 PROCESSING"]);
  });

  it("keeps a finished event finished", async () => {
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    const done = await register.settle(
      claim.lease,
      { status: EventStatus.SUCCEEDED, order, response: snapshot },
      report,
      T0 + 1,
    );
    expect(done).toMatchObject({ status: "SUCCEEDED", order, response: snapshot, finishedAttempts: 1 });
    expect(await register.claim(claimRequest({ now: T0 + 60_000 }))).toEqual([]);
    const final = { status: EventStatus.FAILED_FINAL, error: "x", errorClass: "x", response: snapshot } as const;
    expect(await register.settle(claim.lease, final, report, T0 + 2)).toBeUndefined();
  });

  it("replays a finished or waiting event with a fresh budget, keeps its history, and records who and why", async () => {
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    await register.settle(
      claim.lease,
      {
        status: EventStatus.FAILED_FINAL,
        error: "1C rejected",
        errorClass: "onec_rejected",
        response: { status: 422, body: "{}" },
      },
      report,
      T0 + 1,
    );
    const replayed = await register.replay({
      sender: "default",
      eventId: "evt-1",
      requestedBy: "anna",
      reason: "article added in 1C",
      force: false,
      now: T0 + 100,
    });
    expect(replayed).toMatchObject({
      result: "replayed",
      fromStatus: "FAILED_FINAL",
      record: { status: "PROCESSING", attempts: 1, roundAttempts: 0, response: null, nextAttemptAt: T0 + 100 },
    });
    expect((await claimOne({ now: T0 + 100 })).record.attempts).toBe(2);
    expect(await register.listAttempts("default", "evt-1")).toHaveLength(2);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare("SELECT requested_by, reason, forced, from_status FROM event_replays").all()).toEqual([
        { requested_by: "anna", reason: "article added in 1C", forced: 0, from_status: "FAILED_FINAL" },
      ]);
    } finally {
      db.close();
    }
  });

  it("refuses to replay a SUCCEEDED event without force, an event in flight, and an unknown one", async () => {
    const base = { sender: "default", eventId: "evt-1", requestedBy: "x", reason: "y", force: false, now: T0 };
    expect(await register.replay(base)).toEqual({ result: "not_found" });
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    expect(await register.replay(base)).toMatchObject({ result: "refused", reason: "in_flight" });
    await register.settle(claim.lease, { status: EventStatus.SUCCEEDED, order, response: snapshot }, report, T0 + 1);
    expect(await register.replay({ ...base, now: T0 + 2 })).toMatchObject({ result: "refused", reason: "succeeded" });
    expect(await register.replay({ ...base, now: T0 + 2, force: true })).toMatchObject({ result: "replayed" });
  });

  it("lists events by status and time window", async () => {
    for (let i = 0; i < 5; i++) await register.reserve(reserveRequest({ eventId: `e${i}`, now: T0 + i * 1000 }));
    const listed = await register.list({
      status: EventStatus.PROCESSING,
      since: T0 + 1000,
      until: T0 + 3000,
      limit: 10,
    });
    expect(listed.map((r) => r.eventId)).toEqual(["e1", "e2", "e3"]);
    expect(await register.list({ status: EventStatus.SUCCEEDED, limit: 10 })).toEqual([]);
  });

  it("scopes events by sender", async () => {
    await register.reserve(reserveRequest());
    expect((await register.reserve(reserveRequest({ sender: "shop-b" }))).outcome).toBe("created");
    expect(await register.find("shop-c", "evt-1")).toBeUndefined();
  });

  it("runs in WAL mode with synchronous=FULL, at the latest schema version", () => {
    expect(register.durability()).toEqual({ journalMode: "wal", synchronous: "FULL" });
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it("reports a write lock held past the busy timeout as StorageUnavailableError", async () => {
    const impatient = new SqliteRegister(file, { busyTimeoutMs: 50 });
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    try {
      await expect(impatient.reserve(reserveRequest({ eventId: "evt-locked" }))).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect((await impatient.reserve(reserveRequest({ eventId: "evt-locked" }))).outcome).toBe("created");
    await impatient.close();
  });
});
