import { describe, expect, it } from "vitest";
import { EventStatus } from "../../src/register/event-status.ts";
import type {
  AttemptRecord,
  AttemptReport,
  Claim,
  ClaimRequest,
  EventRegister,
  EventSnapshot,
  ReplayRecord,
  Settlement,
} from "../../src/register/port.ts";
import { describeChange, eventRecord, reserveRequest, T0 } from "../support/records.ts";
import { registerBackends, registerPerTest } from "../support/register-backends.ts";

/**
 * The register's contract (src/register/port.ts), run against every backend:
 * SQLite always, PostgreSQL when a server is there (always under PG_REQUIRED=1).
 * Backend-only matters are in sqlite-register.test.ts and postgres-register.test.ts.
 */

function claimRequest(patch: Partial<ClaimRequest> = {}): ClaimRequest {
  return { owner: "worker-a", now: T0, leaseMs: 1000, limit: 10, ...patch };
}

const order = { id: "o-1", number: "ORD-1" };
const snapshot = { status: 201, body: '{"ok":true}' };
const report: AttemptReport = { startedAt: T0, durationMs: 12, outcome: "delivered", httpStatus: 201 };
const succeeded: Settlement = { status: EventStatus.SUCCEEDED, order, response: snapshot };

describe.each(registerBackends())("register on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
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
      changes.push(describeChange(change));
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
      kind: "replayed",
      fromStatus: "FAILED_FINAL",
      record: { status: "PROCESSING", attempts: 1, roundAttempts: 0, response: null, nextAttemptAt: T0 + 100 },
    });
    expect((await claimOne({ now: T0 + 100 })).record.attempts).toBe(2);
    expect(await register.listAttempts("default", "evt-1")).toHaveLength(2);
    expect(await register.listReplays("default", "evt-1")).toEqual([
      {
        requestedBy: "anna",
        reason: "article added in 1C",
        forced: false,
        fromStatus: "FAILED_FINAL",
        requestedAt: T0 + 100,
      },
    ]);
  });

  it("refuses to replay a SUCCEEDED event without force, an event in flight, and an unknown one", async () => {
    const base = { sender: "default", eventId: "evt-1", requestedBy: "x", reason: "y", force: false, now: T0 };
    expect(await register.replay(base)).toEqual({ kind: "missing" });
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    expect(await register.replay(base)).toMatchObject({ kind: "refused", reason: "in_flight" });
    await register.settle(claim.lease, { status: EventStatus.SUCCEEDED, order, response: snapshot }, report, T0 + 1);
    expect(await register.replay({ ...base, now: T0 + 2 })).toMatchObject({ kind: "refused", reason: "succeeded" });
    expect(await register.replay({ ...base, now: T0 + 2, force: true })).toMatchObject({ kind: "replayed" });
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

  it("finds an event under every sender by its id, senders in order", async () => {
    await register.reserve(reserveRequest({ sender: "shop-b" }));
    await register.reserve(reserveRequest({ sender: "shop-a" }));
    await register.reserve(reserveRequest({ sender: "shop-a", eventId: "other" }));
    expect((await register.findByEventId("evt-1")).map((r) => r.sender)).toEqual(["shop-a", "shop-b"]);
  });

  it("pages newest first by keyset, ties broken by sender and event id, within the filters", async () => {
    await register.reserve(reserveRequest({ eventId: "a", now: T0 }));
    await register.reserve(reserveRequest({ eventId: "b", now: T0 + 1 }));
    await register.reserve(reserveRequest({ eventId: "c", now: T0 + 1 }));
    await register.reserve(reserveRequest({ eventId: "c", sender: "shop-b", now: T0 + 1 }));
    await register.reserve(reserveRequest({ eventId: "d", now: T0 + 2 }));
    const key = (r: { sender: string; eventId: string }) => `${r.sender}/${r.eventId}`;
    const first = await register.page({ limit: 2 });
    expect(first.map(key)).toEqual(["default/d", "shop-b/c"]);
    const last = first[1];
    if (last === undefined) throw new Error("short page");
    const second = await register.page({
      limit: 2,
      before: { receivedAt: last.receivedAt, sender: last.sender, eventId: last.eventId },
    });
    expect(second.map(key)).toEqual(["default/c", "default/b"]);
    expect((await register.page({ limit: 10, sender: "default", until: T0 + 1 })).map(key)).toEqual([
      "default/c",
      "default/b",
      "default/a",
    ]);
  });

  it("counts the backlog: pending events, the oldest of them, and the dead letters", async () => {
    expect(await register.backlog()).toEqual({ pending: 0, oldestPendingReceivedAt: null, failedFinal: 0 });
    await register.reserve(reserveRequest({ eventId: "old", now: T0 }));
    await register.reserve(reserveRequest({ eventId: "new", now: T0 + 50 }));
    await register.reserve(reserveRequest({ eventId: "dead", now: T0 + 100 }));
    const claim = await claimOne({ only: { sender: "default", eventId: "old" }, now: T0 + 200 });
    await register.settle(claim.lease, succeeded, report, T0 + 201);
    const dead = await claimOne({ only: { sender: "default", eventId: "dead" }, now: T0 + 200 });
    const final = { status: EventStatus.FAILED_FINAL, error: "x", errorClass: "x", response: snapshot } as const;
    await register.settle(dead.lease, final, report, T0 + 202);
    expect(await register.backlog()).toEqual({ pending: 1, oldestPendingReceivedAt: T0 + 50, failedFinal: 1 });
  });

  it("counts events per status within the list's bounds, every status present", async () => {
    await register.reserve(reserveRequest({ sender: "shop-a", eventId: "a-1", now: T0 }));
    await register.reserve(reserveRequest({ sender: "shop-a", eventId: "a-2", now: T0 + 10 }));
    await register.reserve(reserveRequest({ sender: "shop-b", eventId: "b-1", now: T0 + 20 }));
    const delivered = await claimOne({ only: { sender: "shop-a", eventId: "a-1" } });
    await register.settle(delivered.lease, succeeded, report, T0 + 1);
    const none = { PROCESSING: 0, SUCCEEDED: 0, FAILED_RETRYABLE: 0, FAILED_FINAL: 0 };
    expect(await register.countByStatus({})).toEqual({ ...none, PROCESSING: 2, SUCCEEDED: 1 });
    expect(await register.countByStatus({ sender: "shop-b" })).toEqual({ ...none, PROCESSING: 1 });
    expect(await register.countByStatus({ since: T0 + 5, until: T0 + 15 })).toEqual({ ...none, PROCESSING: 1 });
    expect(await register.countByStatus({ sender: "nobody" })).toEqual(none);
  });

  it("brings waiting retries forward to now, but not leased or finished events", async () => {
    for (const id of ["waiting", "leased", "done"]) await register.reserve(reserveRequest({ eventId: id }));
    const retry: Settlement = {
      status: EventStatus.FAILED_RETRYABLE,
      error: "x",
      errorClass: "timeout",
      nextAttemptAt: T0 + 60_000,
      charged: true,
    };
    const waiting = await claimOne({ only: { sender: "default", eventId: "waiting" } });
    await register.settle(waiting.lease, retry, report, T0 + 1);
    const done = await claimOne({ only: { sender: "default", eventId: "done" } });
    await register.settle(done.lease, succeeded, report, T0 + 1);
    await claimOne({ only: { sender: "default", eventId: "leased" }, leaseMs: 120_000 });
    expect(await register.bringForwardRetries(T0 + 10)).toBe(1);
    expect(await register.find("default", "waiting")).toMatchObject({ nextAttemptAt: T0 + 10 });
    expect((await register.claim(claimRequest({ now: T0 + 10 }))).map((c) => c.record.eventId)).toEqual(["waiting"]);
  });

  it("purges old finished events in batches, with their attempts and replays; pending ones stay", async () => {
    for (let i = 0; i < 5; i++) await register.reserve(reserveRequest({ eventId: `done-${i}` }));
    await register.reserve(reserveRequest({ eventId: "pending" }));
    for (const claim of await register.claim(claimRequest({ limit: 5 }))) {
      await register.settle(claim.lease, succeeded, report, T0 + 1);
    }
    await register.replay({
      sender: "default",
      eventId: "done-0",
      requestedBy: "t",
      reason: "again",
      force: true,
      now: T0 + 2,
    });
    const again = await claimOne({ only: { sender: "default", eventId: "done-0" }, now: T0 + 2 });
    await register.settle(again.lease, succeeded, report, T0 + 3);

    expect(await register.countFinished({ olderThan: T0 + 1000 })).toBe(5);
    expect(await register.purgeFinished({ olderThan: T0 + 1000, batchSize: 2 })).toBe(2);
    expect(await register.purgeFinished({ olderThan: T0 + 1000, batchSize: 2 })).toBe(2);
    expect(await register.purgeFinished({ olderThan: T0 + 1000, batchSize: 2 })).toBe(1);
    expect(await register.purgeFinished({ olderThan: T0 + 1000, batchSize: 2 })).toBe(0);
    expect((await register.list({ limit: 10 })).map((r) => r.eventId)).toEqual(["pending"]);
    expect(await register.listAttempts("default", "done-0")).toEqual([]);
    expect(await register.listReplays("default", "done-0")).toEqual([]);
    // Forgotten: a resend of its event_id is a new event.
    expect((await register.reserve(reserveRequest({ eventId: "done-0", now: T0 + 2000 }))).outcome).toBe("created");
  });

  it("records one event once when 50 copies arrive at once on two instances", async () => {
    const other = await backend.open();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? register : other).reserve(reserveRequest({ correlationId: `c-${i}`, now: T0 + i })),
      ),
    );
    expect(results.filter((r) => r.outcome === "created")).toHaveLength(1);
    const created = results.find((r) => r.outcome === "created");
    for (const result of results) expect(result.record.correlationId).toBe(created?.record.correlationId);
    expect(await register.list({ limit: 10 })).toHaveLength(1);
  });

  it("never gives one event to two concurrent claimers, and together they take every due event", async () => {
    const other = await backend.open();
    for (let i = 0; i < 30; i++) await register.reserve(reserveRequest({ eventId: `e${i}`, now: T0 + i }));
    const claimers = Array.from({ length: 6 }, async (_, i) => {
      const on = i % 2 === 0 ? register : other;
      const taken: Claim[] = [];
      for (;;) {
        const batch = await on.claim(claimRequest({ owner: `w${i}`, now: T0 + 100, limit: 4 }));
        if (batch.length === 0) return taken;
        taken.push(...batch);
      }
    });
    const claims = (await Promise.all(claimers)).flat();
    const ids = claims.map((c) => c.record.eventId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(30);
    for (const claim of claims) expect(claim.lease.token).toBe(1);
    expect(await register.listAttempts("default", "e7")).toHaveLength(1);
  });
});

/** importEvent (`gateway import`): an event written as another register held it. */
describe.each(registerBackends())("importEvent on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  // Every kind of attempt: finished and applied, finished after its lease was lost, cut short by a crash.
  const attempts: AttemptRecord[] = [
    {
      attempt: 1,
      leaseToken: 1,
      worker: "old-a",
      startedAt: T0 + 10,
      finishedAt: T0 + 15,
      durationMs: 5,
      outcome: "retryable",
      httpStatus: 503,
      errorClass: "http_503",
      detail: "1C answered 503",
      applied: true,
    },
    {
      attempt: 2,
      leaseToken: 2,
      worker: "old-a",
      startedAt: T0 + 1000,
      finishedAt: T0 + 9000,
      durationMs: 8000,
      outcome: "delivered",
      httpStatus: 201,
      errorClass: null,
      detail: "ORD-7",
      applied: false,
    },
    {
      attempt: 3,
      leaseToken: 3,
      worker: "old-b",
      startedAt: T0 + 8000,
      finishedAt: null,
      durationMs: null,
      outcome: null,
      httpStatus: null,
      errorClass: null,
      detail: null,
      applied: null,
    },
  ];
  const replays: ReplayRecord[] = [
    {
      requestedBy: "anna",
      reason: "MUG-010 added in 1C",
      forced: false,
      fromStatus: "FAILED_FINAL",
      requestedAt: T0 + 5,
    },
    { requestedBy: "boris", reason: "check again", forced: true, fromStatus: "SUCCEEDED", requestedAt: T0 + 7 },
  ];
  /** Mid-attempt when the old register stopped: leased by old-b until T0 + 20 s. */
  const leased: EventSnapshot = {
    record: eventRecord({
      eventId: "evt-leased",
      status: EventStatus.PROCESSING,
      lastError: "1C answered 503",
      lastErrorClass: "http_503",
      attempts: 3,
      finishedAttempts: 2,
      roundAttempts: 3,
      roundStartedAt: T0 + 7,
      leaseOwner: "old-b",
      leaseToken: 3,
      leaseUntil: T0 + 20_000,
      nextAttemptAt: T0 + 900,
      receivedAt: T0,
      updatedAt: T0 + 8000,
    }),
    attempts,
    replays,
  };
  const finished: EventSnapshot = {
    record: eventRecord({
      sender: "shop-a",
      eventId: "evt-done",
      status: EventStatus.SUCCEEDED,
      response: { status: 201, body: '{"event_id":"evt-done","status":"SUCCEEDED"}' },
      order: { id: "o-9", number: "ORD-9" },
      finishedAttempts: 1,
      leaseOwner: null,
      leaseUntil: null,
      nextAttemptAt: null,
      updatedAt: T0 + 20,
    }),
    attempts: attempts.slice(0, 1),
    replays: [],
  };

  it("writes the row, attempts and replays as they were, without the lease but with its token", async () => {
    expect(await register.importEvent(leased)).toBe("imported");
    expect(await register.importEvent(finished)).toBe("imported");
    expect(await register.find("default", "evt-leased")).toEqual({
      ...leased.record,
      leaseOwner: null,
      leaseUntil: null,
    });
    expect(await register.listAttempts("default", "evt-leased")).toEqual(attempts);
    expect(await register.listReplays("default", "evt-leased")).toEqual(replays);
    expect(await register.find("shop-a", "evt-done")).toEqual(finished.record);
    expect(await register.listAttempts("shop-a", "evt-done")).toEqual(finished.attempts);
    expect(await register.listReplays("shop-a", "evt-done")).toEqual([]);
  });

  it("lets a new worker claim the imported pending event at once, with a token above the old ones", async () => {
    await register.importEvent(leased);
    // Long before the old lease would have run out.
    const [claim, ...more] = await register.claim(claimRequestAt(T0 + 8001));
    expect(more).toEqual([]);
    expect([claim?.record.eventId, claim?.lease.token, claim?.record.attempts]).toEqual(["evt-leased", 4, 4]);
    const history = await register.listAttempts("default", "evt-leased");
    expect(history.map((a) => [a.attempt, a.leaseToken, a.worker])).toEqual([
      [1, 1, "old-a"],
      [2, 2, "old-a"],
      [3, 3, "old-b"],
      [4, 4, "worker-new"],
    ]);
  });

  it("leaves an event the register already holds as it is: present, nothing added", async () => {
    const held = (await register.reserve(reserveRequest({ eventId: "evt-leased" }))).record;
    expect(await register.importEvent(leased)).toBe("present");
    expect(await register.find("default", "evt-leased")).toEqual(held);
    expect(await register.listAttempts("default", "evt-leased")).toEqual([]);
    expect(await register.listReplays("default", "evt-leased")).toEqual([]);
  });

  it("writes nothing of an event when one of its attempts cannot be written", async () => {
    const broken: EventSnapshot = {
      ...leased,
      attempts: [...attempts, { ...attempts[0], attempt: 4 } as AttemptRecord],
    };
    await expect(register.importEvent(broken)).rejects.toThrow();
    expect(await register.find("default", "evt-leased")).toBeUndefined();
    expect(await backend.rowCount("delivery_attempts", "evt-leased")).toBe(0);
    expect(await backend.rowCount("event_replays", "evt-leased")).toBe(0);
    expect(await register.importEvent(leased)).toBe("imported");
  });

  it("tells watchers of an imported pending event, not of a finished one or of one already present", async () => {
    const changes: string[] = [];
    const unwatch = register.watch((change) => {
      changes.push(describeChange(change));
    });
    await register.importEvent(finished);
    await register.importEvent(leased);
    await register.importEvent(leased);
    unwatch();
    expect(changes).toEqual(["recorded evt-leased PROCESSING"]);
  });

  function claimRequestAt(now: number): ClaimRequest {
    return { owner: "worker-new", now, leaseMs: 1000, limit: 10 };
  }
});

/** The console's search (port.ts: search); its sessions are in conformance/sessions.test.ts. */
describe.each(registerBackends())("console search on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  /** A body as the site sends it (../shared/examples/order-paid.json), down to what the search reads. */
  function orderBody(eventId: string, site: { id: string; number: string }): string {
    return JSON.stringify({ event_id: eventId, event_type: "order.paid", order: { id: site.id, number: site.number } });
  }

  async function recordEvent(patch: {
    sender?: string;
    eventId: string;
    correlationId?: string;
    site: { id: string; number: string };
    now?: number;
  }): Promise<void> {
    await register.reserve(
      reserveRequest({
        sender: patch.sender ?? "default",
        eventId: patch.eventId,
        correlationId: patch.correlationId ?? `corr-${patch.eventId}`,
        body: orderBody(patch.eventId, patch.site),
        now: patch.now ?? T0,
      }),
    );
  }

  /** Delivered: 1C's own order id and number are on the event from now on. */
  async function deliver(eventId: string, onec: { id: string; number: string }, sender = "default"): Promise<void> {
    const [claim] = await register.claim(claimRequest({ only: { sender, eventId }, now: T0 + 100 }));
    if (claim === undefined) throw new Error(`could not claim ${eventId}`);
    const delivered: Settlement = { status: EventStatus.SUCCEEDED, order: onec, response: snapshot };
    await register.settle(claim.lease, delivered, report, T0 + 101);
  }

  const keyOf = (record: { sender: string; eventId: string }) => `${record.sender}/${record.eventId}`;

  describe("search", () => {
    it.each([
      ["event_id", "evt_2026-11-29_shop-a_100234"],
      ["correlation id", "shop-42"],
      ["1C's order id", "b5c1e0de-1c00-4a2b-9e1f-000000000042"],
      ["1C's order number", "ЗК-000042"],
      ["the site's order.id", "A-100234"],
      ["the site's order.number", "100234"],
    ])("finds an event by %s", async (_, term) => {
      await recordEvent({
        eventId: "evt_2026-11-29_shop-a_100234",
        correlationId: "shop-42",
        site: { id: "A-100234", number: "100234" },
      });
      await deliver("evt_2026-11-29_shop-a_100234", {
        id: "b5c1e0de-1c00-4a2b-9e1f-000000000042",
        number: "ЗК-000042",
      });
      // Another event, delivered too, that shares no key with the first.
      await recordEvent({ eventId: "evt-other", correlationId: "shop-43", site: { id: "A-7", number: "7" } });
      await deliver("evt-other", { id: "b5c1e0de-1c00-4a2b-9e1f-000000000043", number: "ЗК-000043" });

      const found = await register.search(term, 10);
      expect(found).toEqual([await register.find("default", "evt_2026-11-29_shop-a_100234")]);
    });

    it("returns every event a term matches, newest first, ties by sender then event_id, each once", async () => {
      const site = { id: "A-5001", number: "5001" };
      // Matches twice over (its correlation id is the order number too): still one row.
      await recordEvent({ sender: "shop-a", eventId: "a-1", correlationId: "5001", site, now: T0 + 10 });
      await recordEvent({ sender: "shop-b", eventId: "b-1", site: { id: "B-1", number: "5001" }, now: T0 + 20 });
      await recordEvent({ sender: "shop-a", eventId: "a-2", site: { id: "A-5002", number: "5001" }, now: T0 + 20 });
      await recordEvent({ sender: "shop-a", eventId: "a-3", site: { id: "A-5003", number: "5003" }, now: T0 + 30 });

      const found = await register.search("5001", 10);
      expect(found.map(keyOf)).toEqual(["shop-a/a-2", "shop-b/b-1", "shop-a/a-1"]);
    });

    it("finds nothing for a term with U+0000, without asking the database (PostgreSQL refuses it: 500 before)", async () => {
      await recordEvent({ eventId: "evt-nul", site: { id: "A-1", number: "1" } });
      await expect(register.search("evt-nul\u0000", 10)).resolves.toEqual([]);
      await expect(register.search("\u0000", 10)).resolves.toEqual([]);
    });

    it("returns at most `limit` events, the newest", async () => {
      for (let i = 0; i < 4; i++) {
        await recordEvent({ eventId: `evt-${i}`, site: { id: `A-${i}`, number: "9000" }, now: T0 + i });
      }
      expect((await register.search("9000", 2)).map(keyOf)).toEqual(["default/evt-3", "default/evt-2"]);
      expect(await register.search("9000", 10)).toHaveLength(4);
    });

    it("matches whole values exactly: no prefix, substring, wildcard, other case or padding", async () => {
      await recordEvent({
        eventId: "evt_2026-11-29_shop-a_100234",
        correlationId: "corr-100234",
        site: { id: "A-100234", number: "100234" },
      });
      for (const term of ["1002", "00234", "10023%", "_00234", "%", "a-100234", "100234 ", " 100234", "evt_2026"]) {
        expect(await register.search(term, 10), term).toEqual([]);
      }
      expect(await register.search("100234", 10)).toHaveLength(1);
    });

    it("answers an empty or over-long term with nothing, without asking the database", async () => {
      const longest = "n".repeat(256);
      await recordEvent({ eventId: "evt-long", site: { id: "A-1", number: longest } });
      expect((await register.search(longest, 10)).map(keyOf)).toEqual(["default/evt-long"]);

      await register.close();
      // Closed, any question to the database fails; these two never ask one.
      expect(await register.search("", 10)).toEqual([]);
      expect(await register.search(`${longest}n`, 10)).toEqual([]);
      await expect(register.search("A-1", 10)).rejects.toThrow();
    });
  });
});
