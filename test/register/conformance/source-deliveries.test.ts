import { describe, expect, it } from "vitest";
import type { EventRegister } from "../../../src/register/port.ts";
import type { SourceDelivery } from "../../../src/register/source-port.ts";
import { claimOne, report, reserveRequest, succeeded, T0 } from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";
import { shopifyPaid, tildaUnmapped, wooUnpaid } from "../../support/source-deliveries.ts";

/** Who maps a delivery again, and why (RemapAudit). */
const BY_ANNA = { by: "anna", reason: "SKU added to the map" };

/**
 * The platforms' webhook deliveries (source-port.ts, SourceDeliveryLog, and
 * ReserveRequest.source), run on every backend. Issue 24: each authentic
 * delivery of a Shopify, WooCommerce or Tilda webhook is kept for support
 * with its payload as received; an accepted one goes in with its event, in
 * one transaction; an unmappable order's retries are one row; ignored and
 * unmapped ones age out with the retention, accepted ones with their event.
 */

const HOUR = 3_600_000;

describe.each(registerBackends())("platform deliveries on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  /** Every delivery kept, newest first. */
  const all = (): Promise<SourceDelivery[]> => register.sources.list({ limit: 1000 });

  describe("reserve with a source", () => {
    it("keeps the delivery that created the event, accepted under the event's id, with its payload as received", async () => {
      const source = shopifyPaid();
      const reserved = await register.reserve(
        reserveRequest({ sender: "shop-main", eventId: source.key, correlationId: "corr-shopify-1", source }),
      );
      expect(reserved.outcome).toBe("created");
      const kept = await register.sources.ofEvent("shop-main", source.key);
      expect(kept).toEqual({
        ...source,
        id: expect.any(Number),
        outcome: "accepted",
        eventId: source.key,
        remappedAt: null,
        remappedBy: null,
        remapReason: null,
      });
      expect(await register.sources.find(kept?.id ?? -1)).toEqual(kept);
      expect(await all()).toEqual([kept]);
    });

    it("writes nothing when the event was there already: a platform's retry of an accepted order is no second row", async () => {
      const first = shopifyPaid();
      await register.reserve(reserveRequest({ sender: "shop-main", eventId: first.key, source: first }));
      const retry = shopifyPaid({ correlationId: "corr-shopify-retry", receivedAt: T0 + 60_000, payload: '{"id":1}' });
      const again = await register.reserve(
        reserveRequest({ sender: "shop-main", eventId: first.key, source: retry, now: T0 + 60_000 }),
      );
      expect(again.outcome).toBe("existing");
      const kept = await all();
      expect(kept).toHaveLength(1);
      expect(kept[0]).toMatchObject({ correlationId: "corr-shopify-1", payload: first.payload, receivedAt: T0 });
    });

    it("keeps exactly one row for 50 concurrent reserves of one event, the one of the reserve that created it", async () => {
      const key = shopifyPaid().key;
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          register.reserve(
            reserveRequest({
              sender: "shop-main",
              eventId: key,
              correlationId: `corr-${i}`,
              source: shopifyPaid({ correlationId: `corr-${i}` }),
            }),
          ),
        ),
      );
      const created = results.filter((result) => result.outcome === "created");
      expect(created).toHaveLength(1);
      const kept = await all();
      expect(kept).toHaveLength(1);
      expect(kept[0]?.correlationId).toBe(created[0]?.record.correlationId);
    });

    it("records neither the event nor its delivery when the delivery cannot be written", async () => {
      // ids is NOT NULL: the source's insert fails inside the reserve's transaction.
      const broken = shopifyPaid({ ids: null as unknown as string });
      await expect(
        register.reserve(reserveRequest({ sender: "shop-main", eventId: broken.key, source: broken })),
      ).rejects.toThrow();
      expect(await register.find("shop-main", broken.key)).toBeUndefined();
      expect(await all()).toEqual([]);
      // Nothing half-written stands in the way of the retry.
      const retry = await register.reserve(
        reserveRequest({ sender: "shop-main", eventId: broken.key, source: shopifyPaid() }),
      );
      expect(retry.outcome).toBe("created");
      expect(await all()).toHaveLength(1);
    });

    it("writes no delivery for a reserve without a source", async () => {
      await register.reserve(reserveRequest({ eventId: "evt-site" }));
      expect(await register.sources.ofEvent("default", "evt-site")).toBeUndefined();
      expect(await all()).toEqual([]);
    });
  });

  describe("record", () => {
    it("keeps every ignored delivery, each as its own row, even under one key", async () => {
      const first = await register.sources.record(wooUnpaid());
      const second = await register.sources.record(wooUnpaid({ correlationId: "corr-woo-2", receivedAt: T0 + 1 }));
      expect(second.id).not.toBe(first.id);
      expect(first).toEqual({
        ...wooUnpaid(),
        id: first.id,
        eventId: null,
        remappedAt: null,
        remappedBy: null,
        remapReason: null,
      });
      expect(second).toMatchObject({ outcome: "ignored", correlationId: "corr-woo-2", eventId: null });
      expect((await all()).map((row) => row.id)).toEqual([second.id, first.id]);
    });

    it("keeps an unmapped delivery once per (sender, platform, key), returning the kept row to every retry", async () => {
      const first = await register.sources.record(tildaUnmapped());
      const retry = await register.sources.record(
        tildaUnmapped({ correlationId: "corr-tilda-retry", receivedAt: T0 + 60_000, payload: "tranid=other" }),
      );
      expect(retry).toEqual(first);
      expect(first).toEqual({
        ...tildaUnmapped(),
        id: first.id,
        eventId: null,
        remappedAt: null,
        remappedBy: null,
        remapReason: null,
      });
      expect(await all()).toEqual([first]);
      // Another key, another sender or another platform is another order.
      await register.sources.record(tildaUnmapped({ key: "tilda:1234567891" }));
      await register.sources.record(tildaUnmapped({ sender: "shop-tilda-2" }));
      await register.sources.record(tildaUnmapped({ platform: "woocommerce" }));
      expect(await all()).toHaveLength(4);
    });

    it("keeps unmapped retries as one row when they arrive at once", async () => {
      const rows = await Promise.all(
        Array.from({ length: 20 }, (_, i) => register.sources.record(tildaUnmapped({ correlationId: `corr-${i}` }))),
      );
      expect(new Set(rows.map((row) => row.id)).size).toBe(1);
      expect(await all()).toHaveLength(1);
    });

    it("refuses an accepted delivery: only a reserve writes one, with its event", async () => {
      await expect(register.sources.record(shopifyPaid())).rejects.toThrow(TypeError);
      expect(await all()).toEqual([]);
    });
  });

  describe("reading", () => {
    it("lists newest first, by sender, platform and outcome, in keyset pages before an id", async () => {
      const ignored1 = await register.sources.record(wooUnpaid());
      const unmapped1 = await register.sources.record(tildaUnmapped());
      const source = shopifyPaid();
      await register.reserve(reserveRequest({ sender: "shop-main", eventId: source.key, source }));
      const accepted = await register.sources.ofEvent("shop-main", source.key);
      const ignored2 = await register.sources.record(wooUnpaid({ sender: "shop-woo-2" }));
      const unmapped2 = await register.sources.record(tildaUnmapped({ key: "tilda:2" }));
      const ids = (rows: SourceDelivery[]) => rows.map((row) => row.id);

      expect(ids(await all())).toEqual(ids([unmapped2, ignored2, accepted as SourceDelivery, unmapped1, ignored1]));
      expect(ids(await register.sources.list({ outcome: "unmapped", limit: 10 }))).toEqual(ids([unmapped2, unmapped1]));
      expect(ids(await register.sources.list({ platform: "woocommerce", limit: 10 }))).toEqual(
        ids([ignored2, ignored1]),
      );
      expect(ids(await register.sources.list({ sender: "shop-woo", limit: 10 }))).toEqual(ids([ignored1]));
      expect(
        ids(
          await register.sources.list({ sender: "shop-woo-2", platform: "woocommerce", outcome: "ignored", limit: 10 }),
        ),
      ).toEqual(ids([ignored2]));
      expect(await register.sources.list({ sender: "shop-woo", outcome: "unmapped", limit: 10 })).toEqual([]);

      const page1 = await register.sources.list({ limit: 2 });
      expect(ids(page1)).toEqual(ids([unmapped2, ignored2]));
      const page2 = await register.sources.list({ limit: 2, beforeId: page1.at(-1)?.id ?? 0 });
      expect(ids(page2)).toEqual(ids([accepted as SourceDelivery, unmapped1]));
      const page3 = await register.sources.list({ limit: 2, beforeId: page2.at(-1)?.id ?? 0 });
      expect(ids(page3)).toEqual(ids([ignored1]));
      expect(await register.sources.list({ limit: 2, beforeId: ignored1.id })).toEqual([]);
      expect(ids(await register.sources.list({ outcome: "unmapped", limit: 1, beforeId: unmapped2.id }))).toEqual(
        ids([unmapped1]),
      );
    });

    it("finds a delivery by id, and none for an id never given", async () => {
      const kept = await register.sources.record(wooUnpaid());
      expect(await register.sources.find(kept.id)).toEqual(kept);
      expect(await register.sources.find(kept.id + 1000)).toBeUndefined();
    });

    it("tells an event's delivery only for that sender and event", async () => {
      const source = shopifyPaid();
      await register.reserve(reserveRequest({ sender: "shop-main", eventId: source.key, source }));
      await register.reserve(reserveRequest({ sender: "shop-other", eventId: source.key }));
      expect(await register.sources.ofEvent("shop-main", source.key)).toMatchObject({ outcome: "accepted" });
      expect(await register.sources.ofEvent("shop-other", source.key)).toBeUndefined();
      expect(await register.sources.ofEvent("shop-main", "another-event")).toBeUndefined();
    });
  });

  describe("markRemapped", () => {
    it("marks an unmapped delivery as the event support made of it, once", async () => {
      const unmapped = await register.sources.record(tildaUnmapped());
      // Support fixed the mapping; the order is recorded as an event, then the delivery is marked.
      await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: unmapped.key, now: T0 + HOUR }));
      expect(await register.sources.markRemapped(unmapped.id, unmapped.key, T0 + HOUR, BY_ANNA)).toBe(true);
      // Who and why, kept with it as a replay's are.
      const remapped = {
        ...unmapped,
        eventId: unmapped.key,
        remappedAt: T0 + HOUR,
        remappedBy: "anna",
        remapReason: "SKU added to the map",
      };
      expect(await register.sources.find(unmapped.id)).toEqual(remapped);
      expect(await register.sources.ofEvent("shop-tilda", unmapped.key)).toEqual(remapped);
      // Once only: the second call changes nothing.
      expect(
        await register.sources.markRemapped(unmapped.id, unmapped.key, T0 + 2 * HOUR, { by: "boris", reason: "again" }),
      ).toBe(false);
      expect(await register.sources.find(unmapped.id)).toEqual(remapped);
      // A retry of the same order still finds the kept row, now remapped.
      expect(await register.sources.record(tildaUnmapped({ correlationId: "corr-late" }))).toEqual(remapped);
    });

    it("refuses an accepted, an ignored or an unknown delivery", async () => {
      const source = shopifyPaid();
      await register.reserve(reserveRequest({ sender: "shop-main", eventId: source.key, source }));
      const accepted = await register.sources.ofEvent("shop-main", source.key);
      const ignored = await register.sources.record(wooUnpaid());
      await register.reserve(reserveRequest({ sender: "shop-woo", eventId: "evt-woo" }));
      expect(await register.sources.markRemapped(accepted?.id ?? -1, source.key, T0 + 1, BY_ANNA)).toBe(false);
      expect(await register.sources.markRemapped(ignored.id, "evt-woo", T0 + 1, BY_ANNA)).toBe(false);
      expect(await register.sources.markRemapped(ignored.id + 1000, "evt-woo", T0 + 1, BY_ANNA)).toBe(false);
      expect(await register.sources.find(accepted?.id ?? -1)).toEqual(accepted);
      expect(await register.sources.find(ignored.id)).toEqual(ignored);
    });
  });

  describe("retention", () => {
    it("purges ignored deliveries received before the bound, in batches; unmapped and accepted ones stay", async () => {
      const oldIgnored = await register.sources.record(wooUnpaid({ receivedAt: T0 }));
      const olderIgnored = await register.sources.record(wooUnpaid({ receivedAt: T0 + 1 }));
      const oldUnmapped = await register.sources.record(tildaUnmapped({ receivedAt: T0 + 1 }));
      const boundIgnored = await register.sources.record(wooUnpaid({ receivedAt: T0 + HOUR }));
      const youngUnmapped = await register.sources.record(tildaUnmapped({ key: "k-young", receivedAt: T0 + 2 * HOUR }));
      const source = shopifyPaid({ receivedAt: T0 });
      await register.reserve(reserveRequest({ sender: "shop-main", eventId: source.key, source }));
      const accepted = await register.sources.ofEvent("shop-main", source.key);

      // The bound is exclusive: a delivery received at it stays.
      expect(await register.sources.purge({ olderThan: T0 + HOUR, batchSize: 1 })).toBe(1);
      expect(await register.sources.purge({ olderThan: T0 + HOUR, batchSize: 1 })).toBe(1);
      expect(await register.sources.purge({ olderThan: T0 + HOUR, batchSize: 1 })).toBe(0);
      expect(await register.sources.find(oldIgnored.id)).toBeUndefined();
      expect(await register.sources.find(olderIgnored.id)).toBeUndefined();
      // An unmapped delivery is a payment the platform was told is recorded: it waits for support, however old.
      expect((await all()).map((row) => row.id)).toEqual([
        accepted?.id,
        youngUnmapped.id,
        boundIgnored.id,
        oldUnmapped.id,
      ]);
    });

    it("keeps a remapped delivery however old: it goes with its event", async () => {
      const unmapped = await register.sources.record(tildaUnmapped());
      await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: unmapped.key }));
      await register.sources.markRemapped(unmapped.id, unmapped.key, T0 + 1, BY_ANNA);
      expect(await register.sources.purge({ olderThan: T0 + HOUR, batchSize: 10 })).toBe(0);
      expect(await register.sources.ofEvent("shop-tilda", unmapped.key)).toMatchObject({ id: unmapped.id });
    });

    it("removes an event's accepted delivery with the event when purgeFinished takes it", async () => {
      const source = shopifyPaid();
      await register.reserve(reserveRequest({ sender: "shop-main", eventId: source.key, source }));
      const kept = await register.sources.record(wooUnpaid({ receivedAt: T0 + 5 * HOUR }));
      const claim = await claimOne(register, { only: { sender: "shop-main", eventId: source.key } });
      await register.settle(claim.lease, succeeded, report, T0 + 1);

      expect(await register.purgeFinished({ olderThan: T0 + HOUR, batchSize: 10 })).toBe(1);
      expect(await register.sources.ofEvent("shop-main", source.key)).toBeUndefined();
      expect(await all()).toEqual([kept]);
      // The event is forgotten: a resend is new, and keeps its delivery again.
      const resent = await register.reserve(
        reserveRequest({ sender: "shop-main", eventId: source.key, source, now: T0 + 2 * HOUR }),
      );
      expect(resent.outcome).toBe("created");
      expect(await register.sources.ofEvent("shop-main", source.key)).toMatchObject({ outcome: "accepted" });
    });
  });
});
