import { describe, expect, it } from "vitest";
import { EventStatus } from "../../../src/domain/event-status.ts";
import type { Claim, ClaimRequest, EventRegister } from "../../../src/register/port.ts";
import {
  claimOne as claimFirst,
  order,
  report,
  reserveRequest,
  responseSnapshot as snapshot,
  T0,
} from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * Conformance of audit and replays (src/register/port.ts, EventQueue.replay and AuditTrail: replay refusal, the fresh budget, who asked and why),
 * run on every backend: SQLite always, PostgreSQL when a server is there
 * (always under PG_REQUIRED=1). A rule changed in one backend only fails here.
 */
describe.each(registerBackends())("audit and replays on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  const claimOne = (patch: Partial<ClaimRequest> = {}): Promise<Claim> => claimFirst(register, patch);

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

  it("refuses, writing nothing, to replay an event no longer in the status it was chosen by (a bulk replay), even with force", async () => {
    await register.reserve(reserveRequest());
    const claim = await claimOne();
    await register.settle(claim.lease, { status: EventStatus.SUCCEEDED, order, response: snapshot }, report, T0 + 1);
    const chosenAsFailed = {
      sender: "default",
      eventId: "evt-1",
      requestedBy: "ops",
      reason: "bulk",
      force: true,
      now: T0 + 2,
      expectedStatus: EventStatus.FAILED_FINAL,
    };
    expect(await register.replay(chosenAsFailed)).toMatchObject({
      kind: "refused",
      reason: "changed",
      record: { status: "SUCCEEDED" },
    });
    expect(await register.listReplays("default", "evt-1")).toEqual([]);
    expect((await register.find("default", "evt-1"))?.status).toBe("SUCCEEDED");
    const chosenAsSucceeded = { ...chosenAsFailed, expectedStatus: EventStatus.SUCCEEDED };
    expect(await register.replay(chosenAsSucceeded)).toMatchObject({ kind: "replayed", fromStatus: "SUCCEEDED" });
  });

  it("fences out an attempt whose lease ran out before a replay: its late outcome does not land on the new round", async () => {
    await register.reserve(reserveRequest());
    const stale = await claimOne({ now: T0, leaseMs: 1000 });
    // The lease has run out (1C hanging, a long pause): support replays the event, nobody has claimed it since.
    const base = { sender: "default", eventId: "evt-1", requestedBy: "anna", reason: "stuck", force: false };
    expect(await register.replay({ ...base, now: T0 + 5000 })).toMatchObject({ kind: "replayed" });
    const late = await register.settle(
      stale.lease,
      {
        status: EventStatus.FAILED_FINAL,
        error: "1C timed out",
        errorClass: "onec_timeout",
        response: { status: 504, body: "{}" },
      },
      report,
      T0 + 6000,
    );
    expect(late).toBeUndefined();
    expect(await register.find("default", "evt-1")).toMatchObject({ status: "PROCESSING", nextAttemptAt: T0 + 5000 });
    // The new round's claim still works, and its outcome lands.
    const fresh = await claimOne({ now: T0 + 5000 });
    expect(
      await register.settle(
        fresh.lease,
        { status: EventStatus.SUCCEEDED, order, response: snapshot },
        report,
        T0 + 5001,
      ),
    ).toMatchObject({ status: "SUCCEEDED" });
  });
});
