import { describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { RegisterChange, Settlement } from "../../src/register/port.ts";
import type { ClockSource } from "../../src/register/postgres/statements.ts";
import { postgresForTests } from "../support/postgres.ts";
import { postgresRegistersPerTest } from "../support/postgres-registers.ts";
import { reserveRequest } from "../support/records.ts";

/**
 * The rule: "lease and due times use the database clock (now()), so
 * instances with skewed clocks agree". Two instances here run ten minutes
 * apart, one behind the database and one ahead, as two machines without NTP
 * would. Each case also runs on node's clock (DATABASE_CLOCK=node), where the
 * same skew does the harm the database's clock prevents: the case can fail.
 */
const pg = postgresForTests();
const SKEW_MS = 10 * 60_000;
const LEASE_MS = 30_000;
const report = { startedAt: 0, durationMs: 1, outcome: "retryable" } as const;

describe.skipIf(!pg.enabled)("PostgreSQL register: whose clock", () => {
  // The schema comes with the first open; each case starts from empty tables.
  const registers = postgresRegistersPerTest(pg, [
    "inbound_events",
    "delivery_attempts",
    "event_replays",
    "source_deliveries",
  ]);
  const { open, databaseNow } = registers;

  /** Two instances on one database: "behind" runs SKEW_MS slow, "ahead" SKEW_MS fast. */
  async function skewedPair(clock: ClockSource) {
    const behind = await open(clock);
    const ahead = await open(clock);
    return { behind, ahead, behindNow: () => Date.now() - SKEW_MS, aheadNow: () => Date.now() + SKEW_MS };
  }

  it("stamps a new event with the database's time, whatever the instance's clock says", async () => {
    const { behind } = await skewedPair("database");
    const before = await databaseNow();
    const { record } = await behind.reserve(reserveRequest({ eventId: "stamped", now: Date.now() - SKEW_MS }));
    const after = await databaseNow();
    expect(record.receivedAt).toBeGreaterThanOrEqual(before);
    expect(record.receivedAt).toBeLessThanOrEqual(after);
    expect(record.nextAttemptAt).toBe(record.receivedAt);
  });

  it.each([
    ["database", []],
    ["node", ["leased"]],
  ] as const)("on the %s clock, an instance running ahead takes a held lease: %j", async (clock, stolen) => {
    const { behind, ahead, behindNow, aheadNow } = await skewedPair(clock);
    await behind.reserve(reserveRequest({ eventId: "leased", now: behindNow() }));
    const [held] = await behind.claim({ owner: "behind", now: behindNow(), leaseMs: LEASE_MS, limit: 1 });
    expect(held?.record.eventId).toBe("leased");

    const taken = await ahead.claim({ owner: "ahead", now: aheadNow(), leaseMs: LEASE_MS, limit: 1 });
    expect(taken.map((c) => c.record.eventId)).toEqual(stolen);
  });

  it.each([
    ["database", []],
    ["node", ["backing-off"]],
  ] as const)(
    "on the %s clock, an instance running ahead retries before the backoff ends: %j",
    async (clock, early) => {
      const { behind, ahead, behindNow, aheadNow } = await skewedPair(clock);
      await behind.reserve(reserveRequest({ eventId: "backing-off", now: behindNow() }));
      const [claim] = await behind.claim({ owner: "behind", now: behindNow(), leaseMs: LEASE_MS, limit: 1 });
      if (claim === undefined) throw new Error("nothing claimed");
      const settledAt = behindNow();
      const retry: Settlement = {
        status: EventStatus.FAILED_RETRYABLE,
        error: "1C timed out",
        errorClass: "timeout",
        nextAttemptAt: settledAt + 60_000,
        charged: true,
      };
      const settled = await behind.settle(claim.lease, retry, report, settledAt);
      if (clock === "database") {
        // The policy's one minute of backoff, counted from the database's now.
        const dbNow = await databaseNow();
        expect(settled?.nextAttemptAt).toBeGreaterThan(dbNow + 55_000);
        expect(settled?.nextAttemptAt).toBeLessThanOrEqual(dbNow + 60_000);
      }

      const taken = await ahead.claim({ owner: "ahead", now: aheadNow(), leaseMs: LEASE_MS, limit: 1 });
      expect(taken.map((c) => c.record.eventId)).toEqual(early);
    },
  );

  it.each([
    ["database", "refused"],
    ["node", "replayed"],
  ] as const)(
    "on the %s clock, a replay from an instance running ahead while a lease holds is %s",
    async (clock, result) => {
      const { behind, ahead, behindNow, aheadNow } = await skewedPair(clock);
      await behind.reserve(reserveRequest({ eventId: "in-flight", now: behindNow() }));
      await behind.claim({ owner: "behind", now: behindNow(), leaseMs: LEASE_MS, limit: 1 });
      const replay = await ahead.replay({
        sender: "default",
        eventId: "in-flight",
        requestedBy: "support",
        reason: "looks stuck",
        force: false,
        now: aheadNow(),
      });
      expect(replay.kind).toBe(result);
      if (replay.kind === "refused") expect(replay.reason).toBe("in_flight");
    },
  );

  it("tells every instance when retries are brought forward, once, so idle workers claim them at once", async () => {
    const a = await open("database");
    const b = await open("database");
    await a.reserve(reserveRequest({ eventId: "held-back", now: Date.now() }));
    const [claim] = await a.claim({ owner: "a", now: Date.now(), leaseMs: LEASE_MS, limit: 1 });
    if (claim === undefined) throw new Error("nothing claimed");
    const now = Date.now();
    await a.settle(
      claim.lease,
      {
        status: EventStatus.FAILED_RETRYABLE,
        error: "down",
        errorClass: "connect",
        nextAttemptAt: now + 600_000,
        charged: true,
      },
      report,
      now,
    );

    const seenByB: RegisterChange[] = [];
    const told = new Promise<RegisterChange>((resolve) => {
      b.watch((change) => {
        seenByB.push(change);
        if (change.kind === "rescheduled") resolve(change);
      });
    });
    const marker = new Promise<void>((resolve) => {
      b.watch((change) => {
        if (change.kind === "recorded" && change.eventId === "marker") resolve();
      });
    });
    expect(await a.bringForwardRetries(Date.now())).toBe(1);
    expect(await told).toEqual({ kind: "rescheduled", count: 1 });
    const due = await b.claim({ owner: "b", now: Date.now(), leaseMs: LEASE_MS, limit: 1 });
    expect(due.map((c) => c.record.eventId)).toEqual(["held-back"]);
    // Nothing was due to bring forward: no notice. Notifications arrive in commit order, so once
    // the marker recorded after it has reached B, a notice from the empty call would have too.
    expect(await a.bringForwardRetries(Date.now())).toBe(0);
    await a.reserve(reserveRequest({ eventId: "marker", now: Date.now() }));
    await marker;
    expect(seenByB.filter((c) => c.kind === "rescheduled")).toHaveLength(1);
  });
});
