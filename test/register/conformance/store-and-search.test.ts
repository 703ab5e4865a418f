import { describe, expect, it } from "vitest";
import { EventStatus } from "../../../src/domain/event-status.ts";
import type { Claim, ClaimRequest, EventRegister, Settlement } from "../../../src/register/port.ts";
import {
  claimOne as claimFirst,
  claimRequest,
  report,
  reserveRequest,
  responseSnapshot as snapshot,
  succeeded,
  T0,
} from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * Conformance of the event store and search (src/register/port.ts, EventStore: find, findByEventId, list, page, search, countByStatus, backlog),
 * run on every backend: SQLite always, PostgreSQL when a server is there
 * (always under PG_REQUIRED=1). A rule changed in one backend only fails here.
 */
describe.each(registerBackends())("the event store and search on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  const claimOne = (patch: Partial<ClaimRequest> = {}): Promise<Claim> => claimFirst(register, patch);

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
