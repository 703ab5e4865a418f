import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OrderPaidAcceptor } from "../../src/accept/order-paid-acceptor.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import { type Canonical, canonicalizeEvent, fingerprintOf } from "../../src/domain/fingerprint.ts";
import { successSnapshot } from "../../src/domain/first-answer.ts";
import { type OrderPaidEvent, siteOrderKeys } from "../../src/domain/order-paid.ts";
import { type EventRecord, type EventRegister, StorageUnavailableError } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { siteOrderOf } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";
import { withWriteLockOn } from "../support/write-lock.ts";

/**
 * The acceptor over a real SQLite register whose calls are counted: a repeat
 * of a recorded event (issue 13) is answered from register.find() alone, and
 * only a miss goes on to reserve(), the write that takes the lock.
 */

const SENDER = "shop-a";
const ORDER = { id: "order-1", number: "ORD-000001" };
/** Every event here is the fixture's order under its own event_id. */
const siteOrder = siteOrderKeys(orderPaidEvent());

interface Counted {
  register: EventRegister;
  calls: Record<string, number>;
}

/** Every method call on `register` counted by name; the calls themselves go through unchanged. */
function counted(register: EventRegister): Counted {
  const calls: Record<string, number> = {};
  const proxy = new Proxy(register, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        calls[property] = (calls[property] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { register: proxy, calls };
}

function canonicalOf(eventId: string, mutate?: Parameters<typeof orderPaidEvent>[0]): Canonical {
  return canonicalizeEvent(
    orderPaidEvent((event) => {
      event.event_id = eventId;
      mutate?.(event);
    }),
  );
}

/** The same event but for the customer's e-mail: another body under the same event_id. */
function anotherEmail(event: OrderPaidEvent): void {
  event.order.customer.email = "someone-else@example.com";
}

describe("OrderPaidAcceptor: repeats answered from a read", () => {
  let dir: ReturnType<typeof tempDir>;
  let sqlite: SqliteRegister;
  let spy: Counted;

  beforeEach(() => {
    dir = tempDir();
    sqlite = new SqliteRegister(join(dir.path, "register.db"));
    spy = counted(sqlite);
  });
  afterEach(async () => {
    await sqlite.close();
    dir.remove();
  });

  function acceptor(syncWaitMs = 0, pollMs = 20): OrderPaidAcceptor {
    return new OrderPaidAcceptor(spy.register, { syncWaitMs, pollMs, now: Date.now });
  }

  function accept(canonical: Canonical, syncWaitMs = 0) {
    const eventId = JSON.parse(canonical.text).event_id as string;
    return acceptor(syncWaitMs).accept({ sender: SENDER, eventId, canonical, siteOrder, correlationId: "corr-1" });
  }

  /** Records the event straight in the register, as an earlier request would have. */
  async function record(canonical: Canonical, policy = canonical.policy): Promise<EventRecord> {
    const eventId = JSON.parse(canonical.text).event_id as string;
    const reserved = await sqlite.reserve({
      sender: SENDER,
      eventId,
      fingerprint: fingerprintOf(canonical.text, policy),
      policyVersion: policy,
      body: canonical.text,
      ...siteOrderOf(canonical.text),
      correlationId: "corr-0",
      now: Date.now(),
    });
    return reserved.record;
  }

  /** Delivers a recorded event as the deliverer would: claim, then settle SUCCEEDED with its first answer. */
  async function deliver(eventId: string): Promise<EventRecord> {
    const now = Date.now();
    const [claim] = await sqlite.claim({
      owner: "w",
      now,
      leaseMs: 10_000,
      limit: 1,
      only: { sender: SENDER, eventId },
    });
    if (claim === undefined) throw new Error(`${eventId} could not be claimed`);
    const settled = await sqlite.settle(
      claim.lease,
      { status: EventStatus.SUCCEEDED, order: ORDER, response: successSnapshot(eventId, ORDER) },
      { startedAt: now, durationMs: 1, outcome: "delivered", httpStatus: 201 },
      now,
    );
    if (settled === undefined) throw new Error(`${eventId} lost its lease`);
    return settled;
  }

  it("records a new event through the reserving write, and only that request gets the first answer", async () => {
    const canonical = canonicalOf("evt-new");
    const result = await accept(canonical);
    expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { status: "PROCESSING" } });
    expect(spy.calls.reserve).toBe(1);
    expect(await sqlite.find(SENDER, "evt-new")).toMatchObject({ body: canonical.text });
  });

  it("answers a repeat of a finished event with its first answer without calling reserve", async () => {
    const canonical = canonicalOf("evt-done");
    await record(canonical);
    const delivered = await deliver("evt-done");

    const result = await accept(canonical);
    expect(result).toEqual({ kind: "event", firstAnswer: false, record: delivered });
    expect(result.record.response).toEqual(successSnapshot("evt-done", ORDER));
    expect(spy.calls.reserve).toBeUndefined();
  });

  it("answers another body under a recorded event_id as a conflict without calling reserve", async () => {
    await record(canonicalOf("evt-taken"));
    await deliver("evt-taken");
    const changed = canonicalOf("evt-taken", anotherEmail);

    const result = await accept(changed);
    expect(result.kind).toBe("conflict");
    expect(result.record.eventId).toBe("evt-taken");
    expect(spy.calls.reserve).toBeUndefined();
  });

  it("checks the conflict before waiting: another body under a pending event is 409 at once", async () => {
    await record(canonicalOf("evt-pending-conflict"));
    const changed = canonicalOf("evt-pending-conflict", anotherEmail);
    const started = Date.now();
    const result = await accept(changed, 5000);
    expect(result.kind).toBe("conflict");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(spy.calls.reserve).toBeUndefined();
  });

  it("compares a repeat under the policy its row was recorded with, so a policy change is no 409", async () => {
    const canonical = canonicalOf("evt-old-policy");
    await record(canonical, "order-paid/older-policy");
    await deliver("evt-old-policy");
    const result = await accept(canonical);
    expect(result).toMatchObject({ kind: "event", firstAnswer: false, record: { status: "SUCCEEDED" } });
    expect(spy.calls.reserve).toBeUndefined();
  });

  it("waits on a pending repeat for its outcome, as before, and answers it without calling reserve", async () => {
    const canonical = canonicalOf("evt-in-flight");
    await record(canonical);
    // A poll a minute apart, and a sync wait of 3 s: only the settle's change notice can wake it in time.
    const answered = acceptor(3000, 60_000).accept({
      sender: SENDER,
      eventId: "evt-in-flight",
      canonical,
      siteOrder,
      correlationId: "corr-1",
    });
    // Waiting: it has read the pending row and watches the register for its change.
    await vi.waitFor(() => expect(spy.calls.watch).toBe(1), { timeout: 4000, interval: 5 });
    expect(spy.calls.find).toBe(1);
    const settledAt = Date.now();
    await deliver("evt-in-flight");
    const result = await answered;
    expect(result).toMatchObject({ kind: "event", firstAnswer: false, record: { status: "SUCCEEDED" } });
    // Far under the poll (60 s) and the sync wait (3 s): woken by the notice, not by a timer.
    expect(Date.now() - settledAt).toBeLessThan(1000);
    expect(spy.calls.reserve).toBeUndefined();
  });

  it("answers a pending repeat still pending after the sync wait, having waited it out", async () => {
    const canonical = canonicalOf("evt-slow");
    await record(canonical);
    const started = Date.now();
    const result = await accept(canonical, 150);
    expect(result).toMatchObject({ kind: "event", firstAnswer: false, record: { status: "PROCESSING" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(spy.calls.reserve).toBeUndefined();
  });

  it("answers a waiting request from the row its settle committed, without reading the register", async () => {
    const canonical = canonicalOf("evt-settled-row");
    const recorded = new Promise<void>((resolve) => {
      const unwatch = sqlite.watch((change) => {
        if (change.kind !== "recorded" || change.eventId !== "evt-settled-row") return;
        unwatch();
        resolve();
      });
    });
    const answered = accept(canonical, 5000);
    await recorded;
    const delivered = await deliver("evt-settled-row");
    expect(await answered).toEqual({ kind: "event", firstAnswer: true, record: delivered });
    // The one read is the look-up before the reservation; none follows the settle.
    expect(spy.calls.find).toBe(1);
  });

  describe("the sync wait", () => {
    it("counts from the request, not from the reservation's commit: a slow write does not push the answer later", async () => {
      const RESERVE_MS = 600;
      const SYNC_WAIT_MS = 500;
      const reserve = spy.register.reserve.bind(spy.register);
      spy.register.reserve = async (request) => {
        await new Promise((resolve) => setTimeout(resolve, RESERVE_MS));
        return reserve(request);
      };
      const started = performance.now();
      const result = await accept(canonicalOf("evt-slow-write"), SYNC_WAIT_MS);
      const tookMs = performance.now() - started;
      expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { status: "PROCESSING" } });
      // Counted from the commit, the answer would come after RESERVE_MS + SYNC_WAIT_MS (1.1 s).
      expect(tookMs).toBeGreaterThanOrEqual(RESERVE_MS - 5);
      expect(tookMs).toBeLessThan(RESERVE_MS + SYNC_WAIT_MS - 100);
    });

    it("answers a recorded event that its reads cannot follow as recorded and pending, not as a failure", async () => {
      const canonical = canonicalOf("evt-reads-fail");
      const eventId = "evt-reads-fail";
      // The reservation records it; every read after that fails, as on a database that went away mid-wait.
      const waiting = new OrderPaidAcceptor(spy.register, { syncWaitMs: 200, pollMs: 20, now: Date.now });
      spy.register.find = () => Promise.reject(new StorageUnavailableError("read failed"));
      const result = await waiting.accept({
        sender: SENDER,
        eventId,
        canonical,
        siteOrder,
        correlationId: "c",
        recognised: false,
      });
      expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { eventId, status: "PROCESSING" } });
      expect(spy.calls.find).toBeGreaterThan(1);
    });

    it("reads again every notifiedPollMs, not every pollMs, while the register hears the other instances", async () => {
      const readsDuringWait = async (hears: boolean) => {
        const canonical = canonicalOf(`evt-hears-${hears}`);
        await record(canonical);
        spy.register.hearsOtherInstances = () => hears;
        const before = spy.calls.find ?? 0;
        const waiting = new OrderPaidAcceptor(spy.register, {
          syncWaitMs: 600,
          pollMs: 20,
          notifiedPollMs: 200,
          now: Date.now,
        });
        await waiting.accept({
          sender: SENDER,
          eventId: `evt-hears-${hears}`,
          canonical,
          siteOrder,
          correlationId: "c",
        });
        return (spy.calls.find ?? 0) - before - 1;
      };
      // 600 ms: three reads at 200 ms apart, and some 30 at 20 ms (fewer on a loaded machine, never near three).
      expect(await readsDuringWait(true)).toBeLessThanOrEqual(3);
      expect(await readsDuringWait(false)).toBeGreaterThan(10);
    });
  });

  describe("a new event whose request will wait for 1C", () => {
    interface Expedited {
      calls: number;
      /** Whether the reservation had been answered when the deliverer was asked to claim. */
      reservedBefore: boolean[];
      claims: Promise<unknown[]>[];
    }

    /** An acceptor whose expedite claims the event at once, as the gateway's deliverer does. */
    function expediting(syncWaitMs: number, deliveryActive = true): { acceptor: OrderPaidAcceptor; seen: Expedited } {
      const seen: Expedited = { calls: 0, reservedBefore: [], claims: [] };
      let reserved = false;
      const reserve = spy.register.reserve.bind(spy.register);
      spy.register.reserve = (request) =>
        reserve(request).then((result) => {
          reserved = true;
          return result;
        });
      const acceptor = new OrderPaidAcceptor(spy.register, {
        syncWaitMs,
        pollMs: 20,
        now: Date.now,
        deliveryActive: () => deliveryActive,
        expedite: (sender, eventId) => {
          seen.calls++;
          seen.reservedBefore.push(reserved);
          seen.claims.push(
            sqlite.claim({ owner: "w", now: Date.now(), leaseMs: 10_000, limit: 1, only: { sender, eventId } }),
          );
        },
      });
      return { acceptor, seen };
    }

    it("asks for the claim before the reservation commits, and the claim, queued behind it, gets the event", async () => {
      const { acceptor, seen } = expediting(100);
      const result = await acceptor.accept({
        sender: SENDER,
        eventId: "evt-expedited",
        canonical: canonicalOf("evt-expedited"),
        siteOrder,
        correlationId: "corr-1",
      });
      expect(result).toMatchObject({ kind: "event", firstAnswer: true });
      expect(seen.reservedBefore).toEqual([false]);
      const [claims] = await Promise.all(seen.claims);
      expect(claims).toMatchObject([{ record: { eventId: "evt-expedited", attempts: 1 } }]);
    });

    it("does not ask when the request will not wait: no sync wait, or 1C considered down", async () => {
      for (const [syncWaitMs, active] of [
        [0, true],
        [100, false],
      ] as const) {
        const eventId = `evt-no-wait-${syncWaitMs}`;
        const { acceptor, seen } = expediting(syncWaitMs, active);
        const result = await acceptor.accept({
          sender: SENDER,
          eventId,
          canonical: canonicalOf(eventId),
          siteOrder,
          correlationId: "c",
        });
        expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { status: "PROCESSING" } });
        expect(seen.calls).toBe(0);
      }
    });
  });

  describe("a request that misses on the read while another records the same event_id", () => {
    /** The other request records `other` just after this one's read found nothing. */
    function raceOnFirstRead(other: Canonical): void {
      const find = spy.register.find.bind(spy.register);
      let raced = false;
      spy.register.find = async (sender, eventId) => {
        const found = await find(sender, eventId);
        if (raced) return found;
        raced = true;
        await record(other);
        return found;
      };
    }

    it("is answered as a repeat of the event the other recorded, through reserve's existing row", async () => {
      const canonical = canonicalOf("evt-race");
      raceOnFirstRead(canonical);
      const result = await accept(canonical);
      expect(result).toMatchObject({ kind: "event", firstAnswer: false, record: { correlationId: "corr-0" } });
      expect(spy.calls.reserve).toBe(1);
    });

    it("is answered 409 when the other recorded another body", async () => {
      raceOnFirstRead(canonicalOf("evt-race-2", anotherEmail));
      const result = await accept(canonicalOf("evt-race-2"));
      expect(result.kind).toBe("conflict");
      expect(spy.calls.reserve).toBe(1);
    });
  });

  describe("bytes this process never admitted: the reserving write first, a read only when it is held up", () => {
    // Long enough that a loaded machine's reservation is not "held up" where a test asserts no read was made.
    const READ_AFTER_MS = 250;
    /** Far below the register's busy timeout (5 s): an answer this fast never waited for the lock. */
    const PROMPT_MS = 1000;

    function unseen(canonical: Canonical, correlationId = "corr-1", ownRowWaitMs?: number) {
      const eventId = JSON.parse(canonical.text).event_id as string;
      const acceptor = new OrderPaidAcceptor(spy.register, {
        syncWaitMs: 0,
        pollMs: 20,
        now: Date.now,
        readAfterMs: READ_AFTER_MS,
        ...(ownRowWaitMs === undefined ? {} : { ownRowWaitMs }),
      });
      return acceptor.accept({ sender: SENDER, eventId, canonical, siteOrder, correlationId, recognised: false });
    }

    const withWriteLockHeld = <T>(work: () => Promise<T>) => withWriteLockOn(join(dir.path, "register.db"), work);

    it("records a new event with the reserving write alone: no read that could only miss", async () => {
      const result = await unseen(canonicalOf("evt-unseen-new"));
      expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { status: "PROCESSING" } });
      expect(spy.calls).toEqual({ reserve: 1 });
    });

    it("answers a repeat and another body from the reservation's existing row, as the read would", async () => {
      const canonical = canonicalOf("evt-unseen-done");
      await record(canonical);
      const delivered = await deliver("evt-unseen-done");
      expect(await unseen(canonical)).toEqual({ kind: "event", record: delivered, firstAnswer: false });
      expect(await unseen(canonicalOf("evt-unseen-done", anotherEmail))).toMatchObject({ kind: "conflict" });
      expect(spy.calls.find).toBeUndefined();
    });

    it("answers a repeat from a read while another connection holds the write lock", async () => {
      const canonical = canonicalOf("evt-unseen-locked");
      const recorded = await record(canonical);
      const started = performance.now();
      const [repeat, conflict] = await withWriteLockHeld(() =>
        Promise.all([unseen(canonical), unseen(canonicalOf("evt-unseen-locked", anotherEmail))]),
      );
      expect(performance.now() - started).toBeLessThan(PROMPT_MS);
      expect(repeat).toEqual({ kind: "event", record: recorded, firstAnswer: false });
      expect(conflict).toMatchObject({ kind: "conflict", record: { correlationId: "corr-0" } });
      expect(spy.calls.find).toBe(2);
    });

    it("waits for its own reservation when the read already sees the row it committed: only it gets 201", async () => {
      // The reservation commits at once, but its answer comes late, as when the writer thread's reply waits in a busy loop.
      const reserve = spy.register.reserve.bind(spy.register);
      spy.register.reserve = async (request) => {
        const result = await reserve(request);
        await new Promise((resolve) => setTimeout(resolve, READ_AFTER_MS * 4));
        return result;
      };
      const result = await unseen(canonicalOf("evt-unseen-slow"), "corr-own");
      expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { correlationId: "corr-own" } });
      expect(spy.calls.find).toBe(1);
    });

    it("answers a recorded event from a read when the reservation fails, and passes the failure on otherwise", async () => {
      const canonical = canonicalOf("evt-unseen-failed");
      const recorded = await record(canonical);
      spy.register.reserve = () => Promise.reject(new StorageUnavailableError("disk full"));
      expect(await unseen(canonical)).toEqual({ kind: "event", record: recorded, firstAnswer: false });
      // Under its own correlation id too: a failed reservation wrote nothing, so the row is an earlier request's.
      expect(await unseen(canonical, "corr-0")).toEqual({ kind: "event", record: recorded, firstAnswer: false });
      await expect(unseen(canonicalOf("evt-unseen-never"))).rejects.toThrow(StorageUnavailableError);
    });

    describe("a sender that reuses its correlation id (a retry carrying the first request's X-Correlation-ID)", () => {
      it("is answered 409 at once for another body while the lock is held: that row cannot be its own", async () => {
        await record(canonicalOf("evt-reused-409"));
        const started = performance.now();
        // Were the row waited for as possibly its own, this would take the minute.
        const conflict = await withWriteLockHeld(() =>
          unseen(canonicalOf("evt-reused-409", anotherEmail), "corr-0", 60_000),
        );
        expect(performance.now() - started).toBeLessThan(PROMPT_MS);
        expect(conflict).toMatchObject({ kind: "conflict", record: { correlationId: "corr-0" } });
      });

      it("is answered as a repeat while the lock is held, once the wait for a row of its own runs out", async () => {
        const canonical = canonicalOf("evt-reused-repeat");
        const recorded = await record(canonical);
        const started = performance.now();
        const repeat = await withWriteLockHeld(() => unseen(canonical, "corr-0", 200));
        const took = performance.now() - started;
        expect(took).toBeGreaterThanOrEqual(200);
        expect(took).toBeLessThan(PROMPT_MS);
        expect(repeat).toEqual({ kind: "event", record: recorded, firstAnswer: false });
      });
    });

    describe("a read that fails leaves the answer to the reservation", () => {
      /** The register's own find, kept for the test's checks (the proxy sets the override on the register). */
      function failingReads(): EventRegister["find"] {
        const find = sqlite.find.bind(sqlite);
        spy.register.find = () => Promise.reject(new StorageUnavailableError("read failed"));
        return find;
      }

      it("answers 201 when the late reservation then records the event", async () => {
        const reserve = spy.register.reserve.bind(spy.register);
        spy.register.reserve = async (request) => {
          await new Promise((resolve) => setTimeout(resolve, READ_AFTER_MS * 4));
          return reserve(request);
        };
        const find = failingReads();
        const result = await unseen(canonicalOf("evt-read-fails"));
        expect(result).toMatchObject({ kind: "event", firstAnswer: true, record: { correlationId: "corr-1" } });
        expect(await find(SENDER, "evt-read-fails")).toMatchObject({ correlationId: "corr-1" });
      });

      it("passes on the reservation's own failure, not the read's", async () => {
        spy.register.reserve = () => Promise.reject(new StorageUnavailableError("disk full"));
        failingReads();
        await expect(unseen(canonicalOf("evt-both-fail"))).rejects.toThrow("disk full");
      });
    });
  });
});
