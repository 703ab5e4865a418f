import { describe, expect, it } from "vitest";
import type { EventRegister } from "../../../src/register/port.ts";
import type { MovedDelivery, SourceDelivery, SourceDeliveryInput } from "../../../src/register/source-port.ts";
import { reserveRequest, T0 } from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";
import { tildaUnmapped as kept, wooUnpaid } from "../../support/source-deliveries.ts";

/** A kept delivery as an export carries it: with the event it became, if any, and when. */
function moved(delivery: SourceDeliveryInput, patch: Partial<MovedDelivery>): MovedDelivery {
  return { ...delivery, eventId: null, remappedAt: null, remappedBy: null, remapReason: null, ...patch };
}

const wooIgnored = (patch: Partial<MovedDelivery> = {}) => moved(wooUnpaid(), patch);
const tildaUnmapped = (patch: Partial<MovedDelivery> = {}) => moved(kept(), patch);

/**
 * Moving the platforms' deliveries between registers (source-port.ts,
 * exportPage and importDelivery; EventSnapshot.source), run on every backend.
 * An unmapped delivery is the only record of a paid order until support maps
 * it again: `gateway export` / `gateway import` must carry it, and every
 * other kept payload, as they were; an import run twice adds nothing.
 */

const HOUR = 3_600_000;

/** A delivery as the register shows it, without the id the register gave it. */
function withoutId({ id: _id, ...delivery }: SourceDelivery): MovedDelivery {
  return delivery;
}

describe.each(registerBackends())("moving platform deliveries on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  const all = (): Promise<SourceDelivery[]> => register.sources.list({ limit: 1000 });

  describe("importDelivery", () => {
    it("keeps an ignored and an unmapped delivery as they were, under new ids, newest first", async () => {
      expect(await register.sources.importDelivery(wooIgnored())).toBe("imported");
      expect(await register.sources.importDelivery(tildaUnmapped())).toBe("imported");
      const kept = await all();
      expect(kept.map(withoutId)).toEqual([tildaUnmapped(), wooIgnored()]);
      expect(kept.map((row) => row.id)).toEqual([expect.any(Number), expect.any(Number)]);
    });

    it("keeps a payload and reason holding U+0000 (a register written before the door refused it) with U+FFFD", async () => {
      // PostgreSQL's text cannot hold U+0000: the move from SQLite stopped at such a line, and every delivery after it.
      const old = tildaUnmapped({ payload: "name=a\u0000b", reason: 'unknown SKU "A\u0000"' });
      expect(await register.sources.importDelivery(old)).toBe("imported");
      const [kept] = await all();
      expect(kept?.payload).toBe("name=a\uFFFDb");
      expect(kept?.reason).toBe('unknown SKU "A\uFFFD"');
    });

    it("keeps a remapped delivery's event and time: the event's page still shows where it came from", async () => {
      const remapped = tildaUnmapped({ eventId: "tilda-order-1", remappedAt: T0 + HOUR });
      await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: "tilda-order-1", now: T0 + HOUR }));
      expect(await register.sources.importDelivery(remapped)).toBe("imported");
      const ofEvent = await register.sources.ofEvent("shop-tilda", "tilda-order-1");
      expect(ofEvent === undefined ? undefined : withoutId(ofEvent)).toEqual(remapped);
      // Remapped once: support cannot map it a second time.
      expect(
        await register.sources.markRemapped(ofEvent?.id ?? -1, "tilda-order-1", T0 + 2 * HOUR, {
          by: "anna",
          reason: "again",
        }),
      ).toBe(false);
    });

    it("refuses a remapped delivery whose event is not in the register, writing nothing", async () => {
      const orphan = tildaUnmapped({ eventId: "never-recorded", remappedAt: T0 + HOUR });
      await expect(register.sources.importDelivery(orphan)).rejects.toThrow();
      expect(await all()).toEqual([]);
    });

    it("finds an unmapped delivery present by (sender, platform, key), whatever else it says", async () => {
      const kept = await register.sources.record({ ...tildaUnmapped(), correlationId: "corr-live" });
      const moved = tildaUnmapped({ correlationId: "corr-other", receivedAt: T0 + 5 * HOUR, reason: "another" });
      expect(await register.sources.importDelivery(moved)).toBe("present");
      expect(await all()).toEqual([kept]);
      // Another key of the same shop is another order.
      expect(await register.sources.importDelivery(tildaUnmapped({ key: "tilda:2" }))).toBe("imported");
      expect(await all()).toHaveLength(2);
    });

    it("finds an ignored delivery present by sender, platform, key, time and correlation id, so an import runs twice", async () => {
      expect(await register.sources.importDelivery(wooIgnored())).toBe("imported");
      expect(await register.sources.importDelivery(wooIgnored())).toBe("present");
      expect(await all()).toHaveLength(1);
      // The platform's next delivery under the same key is another row, as record keeps it.
      expect(await register.sources.importDelivery(wooIgnored({ correlationId: "corr-woo-2" }))).toBe("imported");
      expect(await register.sources.importDelivery(wooIgnored({ receivedAt: T0 + 1 }))).toBe("imported");
      expect(await all()).toHaveLength(3);
    });

    it("refuses an accepted delivery: it goes in with its event", async () => {
      await register.reserve(reserveRequest({ sender: "shop-woo", eventId: "evt-woo" }));
      const accepted = wooIgnored({ outcome: "accepted", reason: null, eventId: "evt-woo" });
      await expect(register.sources.importDelivery(accepted)).rejects.toThrow(TypeError);
      expect(await all()).toEqual([]);
    });
  });

  describe("importEvent with the delivery it was accepted from", () => {
    it("writes the delivery with the event, accepted under the event's key; a present event writes neither", async () => {
      const source = { ...tildaUnmapped(), outcome: "accepted" as const, reason: null };
      const record = (await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: "evt-t1" }))).record;
      // A snapshot of the event as another register held it, moved into a register without it.
      const snapshot = { record: { ...record, eventId: "evt-t2" }, attempts: [], replays: [], source };
      expect(await register.importEvent(snapshot)).toBe("imported");
      const kept = await register.sources.ofEvent("shop-tilda", "evt-t2");
      expect(kept).toEqual({ ...source, id: expect.any(Number), eventId: "evt-t2", remappedAt: null });
      expect(await register.importEvent(snapshot)).toBe("present");
      expect(await all()).toHaveLength(1);
    });

    it("writes neither the event nor its delivery when the delivery cannot be written", async () => {
      const record = (await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: "evt-t1" }))).record;
      const broken = { ...tildaUnmapped(), outcome: "accepted" as const, ids: null as unknown as string };
      const snapshot = { record: { ...record, eventId: "evt-t3" }, attempts: [], replays: [], source: broken };
      await expect(register.importEvent(snapshot)).rejects.toThrow();
      expect(await register.find("shop-tilda", "evt-t3")).toBeUndefined();
      expect(await all()).toEqual([]);
    });
  });

  describe("exportPage", () => {
    it("pages the ignored and unmapped deliveries oldest first after an id, never an accepted one", async () => {
      const ignored = await register.sources.record(wooIgnored());
      const source = { ...tildaUnmapped({ key: "tilda:1:accepted" }), outcome: "accepted" as const };
      await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: "evt-paid", source }));
      const unmapped = await register.sources.record(tildaUnmapped());
      await register.reserve(reserveRequest({ sender: "shop-tilda", eventId: "evt-remapped" }));
      await register.sources.markRemapped(unmapped.id, "evt-remapped", T0 + HOUR, { by: "anna", reason: "SKU added" });
      const later = await register.sources.record(wooIgnored({ correlationId: "corr-woo-2" }));
      const ids = (rows: SourceDelivery[]) => rows.map((row) => row.id);

      const page1 = await register.sources.exportPage({ afterId: 0, limit: 2 });
      expect(ids(page1)).toEqual([ignored.id, unmapped.id]);
      expect(page1[1]).toMatchObject({ eventId: "evt-remapped", remappedAt: T0 + HOUR });
      const page2 = await register.sources.exportPage({ afterId: unmapped.id, limit: 2 });
      expect(ids(page2)).toEqual([later.id]);
      expect(await register.sources.exportPage({ afterId: later.id, limit: 2 })).toEqual([]);
    });
  });
});
