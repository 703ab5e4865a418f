import { describe, expect, it } from "vitest";
import { EventStatus } from "../../../src/domain/event-status.ts";
import type { Claim, ClaimRequest, EventRegister, Settlement } from "../../../src/register/port.ts";
import {
  claimOne as claimFirst,
  claimRequest,
  describeChange,
  order,
  report,
  reserveRequest,
  responseSnapshot as snapshot,
  succeeded,
  T0,
} from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * Conformance of the queue (src/register/port.ts, EventQueue: reserve, claim, settle (fenced by the lease token), bringForwardRetries, watch),
 * run on every backend: SQLite always, PostgreSQL when a server is there
 * (always under PG_REQUIRED=1). A rule changed in one backend only fails here.
 */
describe.each(registerBackends())("the queue on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  const claimOne = (patch: Partial<ClaimRequest> = {}): Promise<Claim> => claimFirst(register, patch);

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

  it("keeps what 1C wrote with U+0000 (PostgreSQL's text cannot), without failing the settles it is batched with", async () => {
    await register.reserve(reserveRequest({ eventId: "evt-nul" }));
    await register.reserve(reserveRequest({ eventId: "evt-ok" }));
    const claims = await register.claim(claimRequest({ limit: 2 }));
    const nul = claims.find((claim) => claim.record.eventId === "evt-nul");
    const ok = claims.find((claim) => claim.record.eventId === "evt-ok");
    if (nul === undefined || ok === undefined) throw new Error("both events are due");
    // One event loop turn: both settles go to the register together, as a batch.
    const [failed, delivered] = await Promise.all([
      register.settle(
        nul.lease,
        {
          status: EventStatus.FAILED_FINAL,
          error: "1C: bad\u0000article",
          errorClass: "onec_rejected",
          response: { status: 422, body: '{"message":"bad\u0000article"}' },
        },
        { ...report, outcome: "rejected", httpStatus: 422, detail: "bad\u0000article" },
        T0 + 1,
      ),
      register.settle(ok.lease, succeeded, report, T0 + 1),
    ]);
    expect(delivered).toMatchObject({ status: "SUCCEEDED" });
    expect(failed).toMatchObject({ status: "FAILED_FINAL", lastError: "1C: bad\uFFFDarticle" });
    expect((await register.listAttempts("default", "evt-nul"))[0]).toMatchObject({ detail: "bad\uFFFDarticle" });
  });
});
