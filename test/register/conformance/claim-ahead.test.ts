import { describe, expect, it } from "vitest";
import { EventStatus } from "../../../src/domain/event-status.ts";
import type { Claim, ClaimRequest, EventRegister, Settlement } from "../../../src/register/port.ts";
import { claimOne as claimFirst, claimRequest, report, reserveRequest, T0 } from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * Conformance of claims made ahead (src/register/port.ts, AttemptKind and
 * Release), run on every backend: an attempt records how it was claimed; a
 * claim ahead never takes an event one of whose attempts was lost, so the
 * poison rule can leave at most one lost ahead attempt uncounted; and a claim
 * given back unsent leaves the event as it was before it.
 */
describe.each(registerBackends())("claims ahead on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  const claimOne = (patch: Partial<ClaimRequest> = {}): Promise<Claim> => claimFirst(register, patch);
  const ahead = (patch: Partial<ClaimRequest> = {}) => register.claim(claimRequest({ kind: "ahead", ...patch }));
  const release: Settlement = { status: EventStatus.PROCESSING };
  const retryLater = (nextAttemptAt: number): Settlement => ({
    status: EventStatus.FAILED_RETRYABLE,
    error: "http_503: busy",
    errorClass: "http_503",
    nextAttemptAt,
    charged: true,
  });
  const kinds = async (eventId: string) =>
    (await register.listAttempts("default", eventId)).map((a) => [a.attempt, a.kind, a.finishedAt === null]);

  it("records each attempt's kind: just in time unless claimed ahead, and a claim of one event always just in time", async () => {
    for (const [eventId, now] of [
      ["a", T0],
      ["b", T0 + 1],
      ["c", T0 + 2],
    ] as const) {
      await register.reserve(reserveRequest({ eventId, now }));
    }
    expect((await ahead({ now: T0 + 10, limit: 1 })).map((c) => c.record.eventId)).toEqual(["a"]);
    expect((await register.claim(claimRequest({ now: T0 + 10, limit: 1 }))).map((c) => c.record.eventId)).toEqual([
      "b",
    ]);
    const only = await ahead({ now: T0 + 10, only: { sender: "default", eventId: "c" } });
    expect(only.map((c) => c.record.eventId)).toEqual(["c"]);
    expect(await kinds("a")).toEqual([[1, "ahead", true]]);
    expect(await kinds("b")).toEqual([[1, "just_in_time", true]]);
    expect(await kinds("c")).toEqual([[1, "just_in_time", true]]);
  });

  it("claims ahead an event whose attempts all finished, but not one whose attempt was lost (its lease ran out unsettled)", async () => {
    await register.reserve(reserveRequest({ eventId: "finished" }));
    await register.reserve(reserveRequest({ eventId: "lost", now: T0 + 1 }));
    const [first, second] = await register.claim(claimRequest({ now: T0 + 1, limit: 2 }));
    if (first === undefined || second === undefined) throw new Error("both are due");
    await register.settle(first.lease, retryLater(T0 + 500), report, T0 + 100);
    // "lost": its holder died; the lease runs out at T0 + 1000.

    const later = T0 + 1001;
    expect((await ahead({ now: later })).map((c) => c.record.eventId)).toEqual(["finished"]);
    expect((await register.claim(claimRequest({ now: later }))).map((c) => c.record.eventId)).toEqual(["lost"]);
  });

  it("never claims ahead again an event whose ahead attempt was lost, not even after a replay", async () => {
    await register.reserve(reserveRequest());
    const [lost] = await ahead();
    expect(lost?.record.attempts).toBe(1);
    // Its process died holding it. The next claim, just in time, finishes.
    const next = await claimOne({ now: T0 + 1001 });
    await register.settle(next.lease, retryLater(T0 + 1500), report, T0 + 1100);
    expect(await ahead({ now: T0 + 2000 })).toEqual([]);

    const replayed = await register.replay({
      sender: "default",
      eventId: "evt-1",
      requestedBy: "anna",
      reason: "try again",
      force: false,
      now: T0 + 2000,
    });
    expect(replayed).toMatchObject({ kind: "replayed", record: { attempts: 2, finishedAttempts: 2 } });
    expect(await ahead({ now: T0 + 2001 })).toEqual([]);
    expect((await claimOne({ now: T0 + 2001 })).record.attempts).toBe(3);
    expect(await kinds("evt-1")).toEqual([
      [1, "ahead", true],
      [2, "just_in_time", false],
      [3, "just_in_time", true],
    ]);
  });

  it("gives a claim back unsent: the event as before the claim, its attempt gone, claimable at once with the next token", async () => {
    await register.reserve(reserveRequest());
    const [claim] = await ahead();
    if (claim === undefined) throw new Error("due");
    const before = await register.find("default", "evt-1");
    expect(before).toMatchObject({ attempts: 1, roundAttempts: 1, leaseToken: 1, leaseUntil: T0 + 1000 });

    const released = await register.settle(claim.lease, release, report, T0 + 50);
    expect(released).toMatchObject({
      status: "PROCESSING",
      attempts: 0,
      finishedAttempts: 0,
      roundAttempts: 0,
      leaseOwner: null,
      leaseUntil: null,
      leaseToken: 1,
      nextAttemptAt: T0,
      lastError: null,
    });
    expect(await register.listAttempts("default", "evt-1")).toEqual([]);

    // Long before the lease would have run out, and ahead again: nothing of the claim is held against it.
    const [again] = await ahead({ now: T0 + 60 });
    expect([again?.lease.token, again?.record.attempts]).toEqual([2, 1]);
    expect(await kinds("evt-1")).toEqual([[1, "ahead", true]]);
  });

  it("gives back a claimed retry as the retry it was: FAILED_RETRYABLE, its error and counters kept", async () => {
    await register.reserve(reserveRequest());
    const first = await claimOne();
    const waiting = await register.settle(first.lease, retryLater(T0 + 500), report, T0 + 100);
    const [claim] = await ahead({ now: T0 + 600 });
    if (claim === undefined) throw new Error("due");
    expect(claim.record.status).toBe("PROCESSING");

    const released = await register.settle(claim.lease, release, report, T0 + 650);
    expect(released).toEqual({ ...waiting, leaseToken: 2, updatedAt: released?.updatedAt });
    expect(released).toMatchObject({ status: "FAILED_RETRYABLE", lastError: "http_503: busy", attempts: 1 });
    expect(await kinds("evt-1")).toEqual([[1, "just_in_time", false]]);
  });

  it("fences a late release out like a late outcome: the newer claim keeps its lease and its attempt", async () => {
    await register.reserve(reserveRequest());
    const [stale] = await ahead();
    if (stale === undefined) throw new Error("due");
    const fresh = await claimOne({ owner: "worker-b", now: T0 + 1001 });

    expect(await register.settle(stale.lease, release, report, T0 + 1100)).toBeUndefined();
    expect(await register.find("default", "evt-1")).toMatchObject({
      attempts: 2,
      leaseOwner: "worker-b",
      leaseToken: fresh.lease.token,
      leaseUntil: T0 + 2001,
    });
    expect(await kinds("evt-1")).toEqual([
      [1, "ahead", true],
      [2, "just_in_time", true],
    ]);
  });
});
