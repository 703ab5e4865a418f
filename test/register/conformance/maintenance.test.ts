import { describe, expect, it } from "vitest";
import { EventStatus } from "../../../src/domain/event-status.ts";
import type {
  AttemptRecord,
  Claim,
  ClaimRequest,
  EventRegister,
  EventSnapshot,
  ReplayRecord,
} from "../../../src/register/port.ts";
import {
  claimOne as claimFirst,
  claimRequest,
  describeChange,
  eventRecord,
  report,
  reserveRequest,
  succeeded,
  T0,
} from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * Conformance of maintenance (src/register/port.ts, RegisterMaintenance: purgeFinished, countFinished, importEvent),
 * run on every backend: SQLite always, PostgreSQL when a server is there
 * (always under PG_REQUIRED=1). A rule changed in one backend only fails here.
 */
describe.each(registerBackends())("maintenance on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  const claimOne = (patch: Partial<ClaimRequest> = {}): Promise<Claim> => claimFirst(register, patch);

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
      kind: "ahead",
    },
  ];
  /** As the register gives them back: an attempt exported before attempts had kinds was claimed just in time. */
  const withKinds = (list: AttemptRecord[]) => list.map((attempt) => ({ kind: "just_in_time", ...attempt }));
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
    expect(await register.listAttempts("default", "evt-leased")).toEqual(withKinds(attempts));
    expect(await register.listReplays("default", "evt-leased")).toEqual(replays);
    expect(await register.find("shop-a", "evt-done")).toEqual(finished.record);
    expect(await register.listAttempts("shop-a", "evt-done")).toEqual(withKinds(finished.attempts));
    expect(await register.listReplays("shop-a", "evt-done")).toEqual([]);
  });

  it("finds an imported event by the site's order id and number, read from its body", async () => {
    const body = JSON.stringify({ event_id: "evt-moved", order: { id: "A-4401", number: "4401" } });
    await register.importEvent({ ...finished, record: { ...finished.record, eventId: "evt-moved", body } });
    for (const term of ["A-4401", "4401"]) {
      expect(
        (await register.search(term, 10)).map((record) => record.eventId),
        term,
      ).toEqual(["evt-moved"]);
    }
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
