import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OrderPaidAcceptor } from "../../src/accept/order-paid-acceptor.ts";
import { WebhookIntake } from "../../src/accept/webhook-intake.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import { successSnapshot } from "../../src/domain/first-answer.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import type { SourceSettings, WebhookDelivery } from "../../src/sources/port.ts";
import { shopifyAdapter } from "../../src/sources/shopify.ts";
import { woocommerceAdapter } from "../../src/sources/woocommerce.ts";
import { SHOPIFY_SECRET, shopifyBody, shopifyHeaders, shopifyOrder } from "../support/platforms/shopify.ts";
import { WOO_SECRET, wooDelivery, wooOrder } from "../support/platforms/woocommerce.ts";
import { tempDir } from "../support/temp.ts";

const settings: SourceSettings = { sender: "shop-a", platform: "shopify", secrets: [SHOPIFY_SECRET] };

describe("WebhookIntake: a platform's retry is recognised by its bytes and the headers its adapter reads", () => {
  let dir: ReturnType<typeof tempDir>;
  let register: SqliteRegister;
  let intake: WebhookIntake;

  beforeEach(() => {
    dir = tempDir();
    register = new SqliteRegister(join(dir.path, "register.db"));
    const acceptor = new OrderPaidAcceptor(register, { syncWaitMs: 0, now: Date.now });
    intake = new WebhookIntake({ acceptor, deliveries: register.sources, now: Date.now });
  });
  afterEach(async () => {
    await register.close();
    dir.remove();
  });

  function delivery(body: string, headers = shopifyHeaders(body)): WebhookDelivery {
    return { headers, raw: Buffer.from(body), receivedAt: Date.now() };
  }

  it("reads a retry of the same delivery only once, and still checks its signature every time", async () => {
    const body = shopifyBody(shopifyOrder());
    const headers = shopifyHeaders(body);
    const read = vi.spyOn(shopifyAdapter, "read");
    const verify = vi.spyOn(shopifyAdapter, "verify");
    const first = await intake.take(shopifyAdapter, settings, delivery(body, headers), "c-1");
    const second = await intake.take(shopifyAdapter, settings, delivery(body, headers), "c-2");
    expect(first).toMatchObject({ kind: "event", result: { firstAnswer: true } });
    expect(second).toMatchObject({
      kind: "event",
      result: { firstAnswer: false, record: { eventId: "shopify:820982911946154508" } },
    });
    expect(read).toHaveBeenCalledTimes(1);
    expect(verify).toHaveBeenCalledTimes(2);
    // A retry with a wrong signature is refused before anything is recalled.
    const forged = await intake.take(
      shopifyAdapter,
      settings,
      delivery(body, shopifyHeaders(body, { secret: "x".repeat(20) })),
      "c-3",
    );
    expect(forged.kind).toBe("unauthorized");
    read.mockRestore();
    verify.mockRestore();
  });

  it("knows a retry by its verified signature: the same bytes signed with the other secret of a rotation are read again, and are still one event", async () => {
    const rotating: SourceSettings = { ...settings, secrets: ["shpss_new_secret_0001", SHOPIFY_SECRET] };
    const body = shopifyBody(shopifyOrder());
    const read = vi.spyOn(shopifyAdapter, "read");
    const old = await intake.take(shopifyAdapter, rotating, delivery(body), "c-1");
    const renewed = delivery(body, shopifyHeaders(body, { secret: "shpss_new_secret_0001" }));
    const first = await intake.take(shopifyAdapter, rotating, renewed, "c-2");
    const again = await intake.take(shopifyAdapter, rotating, renewed, "c-3");
    expect(read).toHaveBeenCalledTimes(2);
    expect([old, first, again].map((outcome) => outcome.kind === "event" && outcome.result.firstAnswer)).toEqual([
      true,
      false,
      false,
    ]);
    expect((await register.sources.list({ limit: 10 })).length).toBe(1);
    read.mockRestore();
  });

  it("reads the same bytes again under another topic: the reading depends on it", async () => {
    const body = shopifyBody(shopifyOrder());
    await intake.take(shopifyAdapter, settings, delivery(body), "c-1");
    const otherTopic = await intake.take(
      shopifyAdapter,
      settings,
      delivery(body, shopifyHeaders(body, { topic: "orders/updated" })),
      "c-2",
    );
    expect(otherTopic).toMatchObject({
      kind: "ignored",
      delivery: { reason: expect.stringContaining("orders/updated") },
    });
  });

  it("keeps the delivery's payload with the event only when the event is new", async () => {
    const body = shopifyBody(shopifyOrder());
    await intake.take(shopifyAdapter, settings, delivery(body), "c-1");
    await intake.take(shopifyAdapter, settings, delivery(body), "c-2");
    const kept = await register.sources.list({ limit: 10 });
    expect(kept.map((row) => [row.outcome, row.correlationId, row.payload])).toEqual([["accepted", "c-1", body]]);
  });
});

describe("WebhookIntake: a payment older than what the register remembers (RETENTION_HOURS)", () => {
  const DAY = 86_400_000;
  const MEMORY_MS = 30 * DAY;
  const wooSettings: SourceSettings = {
    sender: "woo-shop",
    platform: "woocommerce",
    secrets: [WOO_SECRET],
    currency: "USD",
    skus: new Map([
      ["product:93", "WOO-SINGLE-1"],
      ["Bar3", "BAR-3"],
    ]),
  };
  /** WooCommerce's GMT timestamps: no zone, seconds. */
  const wooTime = (at: number) => new Date(at).toISOString().slice(0, 19);

  let dir: ReturnType<typeof tempDir>;
  let register: SqliteRegister;
  let intake: WebhookIntake;
  let clock: number;

  beforeEach(() => {
    dir = tempDir();
    register = new SqliteRegister(join(dir.path, "register.db"));
    clock = Date.UTC(2026, 10, 1, 12);
    const now = () => clock;
    const acceptor = new OrderPaidAcceptor(register, { syncWaitMs: 0, now });
    intake = new WebhookIntake({ acceptor, deliveries: register.sources, now, memoryMs: MEMORY_MS });
  });
  afterEach(async () => {
    await register.close();
    dir.remove();
  });

  /** The order as WooCommerce sends it on an update: paid at `paidAt`, last modified now. */
  function update(paidAt: number, status: "processing" | "completed") {
    const { body, headers } = wooDelivery(
      wooOrder({ status, date_paid_gmt: wooTime(paidAt), date_modified_gmt: wooTime(clock) }),
    );
    return intake.take(woocommerceAdapter, wooSettings, { headers, raw: body, receivedAt: clock }, `c-${clock}`);
  }

  it("records a payment made within it as an event", async () => {
    const outcome = await update(clock - 28 * DAY, "processing");
    expect(outcome).toMatchObject({ kind: "event", result: { firstAnswer: true } });
  });

  /** Settles the event as 1C's success, moves the clock past what the register remembers, and purges it. */
  async function deliverAndForget(eventId: string): Promise<void> {
    const [claim] = await register.claim({ owner: "w", now: clock, leaseMs: 10_000, limit: 1 });
    if (claim === undefined) throw new Error("the event was not due");
    const order = { id: "1c-1", number: "ORD-1" };
    await register.settle(
      claim.lease,
      { status: EventStatus.SUCCEEDED, order, response: successSnapshot(eventId, order) },
      { startedAt: clock, durationMs: 1, outcome: "delivered", httpStatus: 201 },
      clock,
    );
    clock += 31 * DAY;
    expect(await register.purgeFinished({ olderThan: clock - MEMORY_MS, batchSize: 100 })).toBe(1);
  }

  it("with RETENTION_HOURS at its least (24), still records a payment made an hour ago", async () => {
    const now = () => clock;
    const acceptor = new OrderPaidAcceptor(register, { syncWaitMs: 0, now });
    intake = new WebhookIntake({ acceptor, deliveries: register.sources, now, memoryMs: DAY });
    const outcome = await update(clock - 3_600_000, "processing");
    expect(outcome).toMatchObject({ kind: "event", result: { firstAnswer: true } });
  });

  it("does not record again the same bytes retried after their event was purged, though the process still knows them", async () => {
    const { body, headers } = wooDelivery(
      wooOrder({ status: "processing", date_paid_gmt: wooTime(clock - 60_000), date_modified_gmt: wooTime(clock) }),
    );
    const send = () =>
      intake.take(woocommerceAdapter, wooSettings, { headers, raw: body, receivedAt: clock }, `c-${clock}`);
    const first = await send();
    expect(first).toMatchObject({ kind: "event", result: { firstAnswer: true } });
    const eventId = first.kind === "event" ? first.result.record.eventId : "";
    await deliverAndForget(eventId);

    const again = await send();
    expect(again).toMatchObject({ kind: "ignored", delivery: { outcome: "ignored", key: eventId } });
    expect(again.kind === "ignored" ? again.delivery.reason : "").toMatch(/RETENTION_HOURS/);
    expect(await register.find("woo-shop", eventId)).toBeUndefined();
  });

  it("does not map again an unmapped delivery whose payment is older than it: a later update may have been the event, since purged", async () => {
    // The SKU was not in the map: the delivery is kept as unmapped. The map is fixed, the order's next update
    // becomes its event, which is delivered and, 31 days on, purged. Support then maps the first delivery again.
    const paidAt = clock - 60_000;
    const unmapped = await intake.take(
      woocommerceAdapter,
      { ...wooSettings, skus: new Map() },
      { ...wooDeliveryAt(paidAt), receivedAt: clock },
      "c-unmapped",
    );
    expect(unmapped).toMatchObject({ kind: "unmapped" });
    const stored = unmapped.kind === "unmapped" ? unmapped.delivery : undefined;
    if (stored === undefined) throw new Error("no unmapped delivery");
    const updated = await update(paidAt, "completed");
    expect(updated).toMatchObject({ kind: "event", result: { firstAnswer: true } });
    const eventId = updated.kind === "event" ? updated.result.record.eventId : "";
    await deliverAndForget(eventId);

    const remapped = await intake.remap(woocommerceAdapter, wooSettings, stored, "c-remap", {
      by: "anna",
      reason: "SKU added",
    });
    expect(remapped).toMatchObject({ kind: "ignored", delivery: { id: stored.id } });
    expect(remapped.kind === "ignored" ? remapped.delivery.reason : "").toMatch(/RETENTION_HOURS/);
    expect(await register.find("woo-shop", eventId)).toBeUndefined();
  });

  /** A delivery of the order paid at `paidAt`, as WooCommerce sends it on "processing". */
  function wooDeliveryAt(paidAt: number): { headers: Record<string, string>; raw: Buffer } {
    const { body, headers } = wooDelivery(
      wooOrder({ status: "processing", date_paid_gmt: wooTime(paidAt), date_modified_gmt: wooTime(clock) }),
    );
    return { headers, raw: body };
  }

  it("does not record an update of an order paid before it as a new event: its event may have been purged", async () => {
    // Paid, accepted, delivered: then 31 days pass, the event is purged, and WooCommerce sends the order again on "completed".
    const paidAt = clock - 60_000;
    const first = await update(paidAt, "processing");
    expect(first).toMatchObject({ kind: "event", result: { firstAnswer: true } });
    const eventId = first.kind === "event" ? first.result.record.eventId : "";
    await deliverAndForget(eventId);

    const again = await update(paidAt, "completed");
    expect(again).toMatchObject({ kind: "ignored", delivery: { outcome: "ignored", key: eventId } });
    expect(again.kind === "ignored" ? again.delivery.reason : "").toMatch(/RETENTION_HOURS/);
    expect(await register.find("woo-shop", eventId)).toBeUndefined();
  });
});
