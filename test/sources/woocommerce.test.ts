import { describe, expect, it } from "vitest";
import { admitOrderPaid } from "../../src/accept/admit-order-paid.ts";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import type { PlatformIds, Reading, SourceSettings, WebhookDelivery } from "../../src/sources/port.ts";
import { woocommerceAdapter as adapter } from "../../src/sources/woocommerce.ts";
import { expectCanonicalKeyOrder } from "../support/canonical-order.ts";
import {
  sign,
  WOO_SECRET,
  WOO_TEST_VECTOR,
  type WooHeaderOptions,
  type WooOrder,
  wooBody,
  wooDelivery,
  wooFeeLine,
  wooHeaders,
  wooLineItem,
  wooOrder,
  wooPing,
  wooShippingLine,
  wooVariationLine,
} from "../support/platforms/woocommerce.ts";

/**
 * The expectations come from WooCommerce's payload (docs/platform-webhooks.md
 * §2) and are computed here in whole cents from its strings, never from the
 * adapter's own helpers.
 */

/** Order 727's lines in the sender's SKU map: line 315 has no SKU, so its product id is mapped. */
const SKUS = new Map([
  ["product:93", "WOO-SINGLE-1"],
  ["Bar3", "BAR-3"],
]);

const settings: SourceSettings = {
  sender: "woo-shop",
  platform: "woocommerce",
  secrets: [WOO_SECRET],
  currency: "USD",
  skus: SKUS,
};

function delivery(body: Buffer | string, headers: WebhookDelivery["headers"]): WebhookDelivery {
  return { headers, raw: Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8"), receivedAt: 1_700_000_000_000 };
}

function signed(order: unknown = wooOrder(), options: WooHeaderOptions = {}): WebhookDelivery {
  const { body, headers } = wooDelivery(order, options);
  return delivery(body, headers);
}

function readOrder(order: unknown, options: WooHeaderOptions = {}, with_: SourceSettings = settings): Reading {
  return adapter.read(signed(order, options), with_);
}

/** A paid reading's event, after checking the gateway would admit it as it is. */
function paid(reading: Reading): { event: OrderPaidEvent; ids: PlatformIds } {
  if (reading.kind !== "paid") throw new Error(`expected paid, got ${JSON.stringify(reading)}`);
  expect(admitOrderPaid(reading.event, undefined).ok).toBe(true);
  expectCanonicalKeyOrder(reading.event);
  return { event: reading.event, ids: reading.ids };
}

/** "29.35", "0.9", "10" → cents, from the payload's text. */
function cents(amount: string): number {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(amount);
  if (match === null) throw new Error(`not an amount: ${amount}`);
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
}

function itemsCents(event: OrderPaidEvent, sku?: string): number {
  return event.order.items
    .filter((item) => sku === undefined || item.sku === sku)
    .reduce((sum, item) => sum + item.quantity * cents(item.price), 0);
}

function paidCents(event: OrderPaidEvent): number {
  return itemsCents(event) + (event.order.delivery === undefined ? 0 : cents(event.order.delivery.price));
}

describe("WooCommerce adapter: what the edge needs", () => {
  it("answers with our JSON answers, well inside WooCommerce's 60-second client timeout", () => {
    expect(adapter.platform).toBe("woocommerce");
    expect(adapter.answerStyle).toBe("json");
    expect(adapter.answerWithinMs).toBe(60_000);
  });
});

describe("WooCommerce verify: X-WC-Webhook-Signature", () => {
  const vector = (signature: string | string[] | undefined, secrets: readonly string[] = [WOO_TEST_VECTOR.secret]) =>
    adapter.verify(delivery(WOO_TEST_VECTOR.body, { "x-wc-webhook-signature": signature }), { ...settings, secrets });

  it("accepts the documented openssl vector", () => {
    expect(sign(WOO_TEST_VECTOR.body, WOO_TEST_VECTOR.secret)).toBe(WOO_TEST_VECTOR.signature);
    // The verified signature identifies the bytes: the intake recognises a retry by it.
    expect(vector(WOO_TEST_VECTOR.signature)).toEqual({ ok: true, digest: WOO_TEST_VECTOR.signature });
  });

  it("refuses the vector with one bit of the signature flipped", () => {
    const bytes = Buffer.from(WOO_TEST_VECTOR.signature, "base64");
    bytes[31] = (bytes[31] as number) ^ 1;
    expect(vector(bytes.toString("base64")).ok).toBe(false);
  });

  it("accepts a signed order delivery", () => {
    expect(adapter.verify(signed(), settings)).toMatchObject({ ok: true });
  });

  it("refuses a signature made with another secret", () => {
    expect(adapter.verify(signed(wooOrder(), { secret: "not_the_secret" }), settings).ok).toBe(false);
  });

  it("refuses a delivery without the header, and says so", () => {
    const result = vector(undefined);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.detail).toMatch(/X-WC-Webhook-Signature is missing/);
  });

  it("refuses a repeated header, even when one copy is right", () => {
    expect(vector([WOO_TEST_VECTOR.signature, WOO_TEST_VECTOR.signature]).ok).toBe(false);
  });

  it("refuses a body changed by one byte", () => {
    const { body, headers } = wooDelivery();
    const tampered = Buffer.from(body);
    tampered[tampered.indexOf("29.35")] = "3".charCodeAt(0);
    expect(adapter.verify(delivery(tampered, headers), settings).ok).toBe(false);
    expect(adapter.verify(delivery(body, headers), settings).ok).toBe(true);
  });

  it("refuses a truncated base64 signature", () => {
    expect(vector(WOO_TEST_VECTOR.signature.slice(0, -2)).ok).toBe(false);
    expect(vector(WOO_TEST_VECTOR.signature.slice(0, 20)).ok).toBe(false);
  });

  it("accepts the second secret during a rotation", () => {
    expect(vector(WOO_TEST_VECTOR.signature, ["the_new_secret", WOO_TEST_VECTOR.secret])).toMatchObject({ ok: true });
    expect(vector(WOO_TEST_VECTOR.signature, ["the_new_secret"]).ok).toBe(false);
  });
});

describe("WooCommerce isPing: the unsigned creation ping", () => {
  const isPing = (body: string, headers: WebhookDelivery["headers"] = {}) =>
    adapter.isPing?.(delivery(body, headers)) ?? false;

  it("knows the ping WooCommerce sends when a webhook is created", () => {
    const ping = wooPing(142);
    expect(adapter.isPing?.(delivery(ping.body, ping.headers))).toBe(true);
  });

  it("is no ping when it carries a signature header: that goes to verify", () => {
    expect(isPing("webhook_id=142", { "x-wc-webhook-signature": sign("webhook_id=142") })).toBe(false);
  });

  it.each(['{"id":1}', "webhook_id=", "webhook_id=abc", "webhook_id=142&status=paid", "webhook_id=142\n", ""])(
    "treats any other unsigned body as no ping: %j",
    (body) => {
      expect(isPing(body)).toBe(false);
    },
  );

  it("treats a signed order delivery as no ping", () => {
    expect(adapter.isPing?.(signed())).toBe(false);
  });
});

describe("WooCommerce read: a paid order (§2.8, order 727)", () => {
  const payload = wooOrder();
  const reading = readOrder(payload, { deliveryId: "7c1e5f", webhookId: 142 });
  const { event, ids } = paid(reading);

  it("keys the event by order id and payment instant", () => {
    expect(event.event_id).toBe("woocommerce:727:20170322192808");
    expect(event.event_type).toBe("order.paid");
  });

  it("books the money WooCommerce says was paid: total, tax and shipping", () => {
    expect(event.order.total).toBe(payload.total);
    expect(event.payment.amount).toBe(payload.total);
    expect(event.order.tax).toBe(payload.total_tax);
    expect(event.order.currency).toBe(payload.currency);
    expect(event.payment.currency).toBe(payload.currency);
    const shipping = payload.shipping_lines[0];
    expect(cents(event.order.delivery?.price ?? "")).toBe(
      cents(shipping?.total ?? "") + cents(shipping?.total_tax ?? ""),
    );
    // 6.00 + 0.45 + 12.00 + 0.90 + 10.00 = 29.35
    expect(paidCents(event)).toBe(cents(payload.total));
    expect(paidCents(event)).toBe(2935);
  });

  it("maps each line at its total plus its tax, through the SKU map", () => {
    const [single, variation] = payload.line_items;
    expect(itemsCents(event, "WOO-SINGLE-1")).toBe(cents(single?.total ?? "") + cents(single?.total_tax ?? ""));
    expect(itemsCents(event, "BAR-3")).toBe(cents(variation?.total ?? "") + cents(variation?.total_tax ?? ""));
    // 6.45 for 2 does not divide: one at 3.22 and one at 3.23.
    expect(event.order.items).toEqual([
      { sku: "WOO-SINGLE-1", name: "Woo Single #1", quantity: 1, price: "3.22" },
      { sku: "WOO-SINGLE-1", name: "Woo Single #1", quantity: 1, price: "3.23" },
      { sku: "BAR-3", name: "Ship Your Idea &ndash; Color: Black, Size: M Test", quantity: 1, price: "12.90" },
    ]);
  });

  it("takes the order, customer, delivery and payment from the payload", () => {
    expect(event.occurred_at).toBe("2017-03-22T19:28:08Z");
    expect(event.order).toMatchObject({ id: "727", number: "727", created_at: "2017-03-22T19:28:02Z" });
    expect(event.order.customer).toEqual({
      name: "John Doe",
      email: "john.doe@example.com",
      phone: "(555) 555-5555",
    });
    expect(event.order.delivery).toEqual({
      method: "flat_rate",
      address: "969 Market, San Francisco, CA, 94103, US",
      price: "10.00",
    });
    // bacs leaves transaction_id empty: the order stands for the payment.
    expect(event.payment).toEqual({
      id: "order-727",
      provider: "bacs",
      amount: "29.35",
      currency: "USD",
      paid_at: "2017-03-22T19:28:08Z",
    });
  });

  it("keeps WooCommerce's ids for support", () => {
    expect(ids).toEqual({
      webhook_id: "142",
      delivery_id: "7c1e5f",
      topic: "order.updated",
      source: "https://example.com/",
      order_id: "727",
      order_number: "727",
      status: "processing",
    });
  });

  it("maps a redelivery of the same bytes to the identical event", () => {
    const body = wooBody(payload);
    const first = adapter.read(delivery(body, wooHeaders(body, { deliveryId: "aaa" })), settings);
    const again = adapter.read(delivery(body, wooHeaders(body, { deliveryId: "bbb" })), settings);
    expect(paid(again).event).toStrictEqual(paid(first).event);
    expect(paid(again).ids.delivery_id).toBe("bbb");
  });

  it("maps the same payment, later completed, to the SAME event", () => {
    const completed = wooOrder({
      status: "completed",
      date_modified: "2017-03-23T09:00:00",
      date_modified_gmt: "2017-03-23T12:00:00",
      date_completed: "2017-03-23T09:00:00",
      date_completed_gmt: "2017-03-23T12:00:00",
    });
    const later = paid(readOrder(completed, { deliveryId: "next" }));
    expect(later.event.event_id).toBe("woocommerce:727:20170322192808");
    expect(later.event).toStrictEqual(event);
    expect(later.ids.status).toBe("completed");
  });

  it("maps the order from order.created the same way", () => {
    expect(paid(readOrder(payload, { topic: "order.created" })).event).toStrictEqual(event);
  });
});

describe("WooCommerce read: money", () => {
  it("books lines after a coupon: the line total, not its subtotal", () => {
    const line = wooLineItem({
      sku: "MUG",
      quantity: 2,
      subtotal: "20.00",
      subtotal_tax: "2.00",
      total: "18.00",
      total_tax: "1.80",
      price: 10,
    });
    const order = wooOrder({
      line_items: [line],
      coupon_lines: [{ id: 400, code: "ten", discount: "2.00", discount_tax: "0.20", meta_data: [] }],
      discount_total: "2.00",
      discount_tax: "0.20",
      cart_tax: "1.80",
      total_tax: "1.80",
      total: "29.80",
    });
    const { event } = paid(readOrder(order, {}, { ...settings, skus: undefined }));
    expect(itemsCents(event)).toBe(cents(line.total) + cents(line.total_tax));
    expect(paidCents(event)).toBe(cents(order.total));
    expect(event.order.items).toEqual([{ sku: "MUG", name: "Woo Single #1", quantity: 2, price: "9.90" }]);
  });

  it("books a tax-inclusive store's line with its tax added back (total excludes it there too)", () => {
    const line = wooLineItem({ sku: "BOOK", quantity: 1, total: "16.67", total_tax: "3.33", price: 16.67 });
    const order = wooOrder({
      prices_include_tax: true,
      line_items: [line],
      shipping_lines: [],
      shipping_total: "0.00",
      cart_tax: "3.33",
      total_tax: "3.33",
      total: "20.00",
    });
    const { event } = paid(readOrder(order, {}, { ...settings, skus: undefined }));
    expect(event.order.items).toEqual([{ sku: "BOOK", name: "Woo Single #1", quantity: 1, price: "20.00" }]);
    expect(event.order.tax).toBe(order.total_tax);
    expect(event.order.delivery).toBeUndefined();
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("splits a line whose total does not divide by its quantity, to the cent", () => {
    const line = wooLineItem({ sku: "PEN", quantity: 3, subtotal: "10.00", total: "10.00", total_tax: "0", taxes: [] });
    const order = wooOrder({ line_items: [line], cart_tax: "0", total_tax: "0", total: "20" });
    const { event } = paid(readOrder(order, {}, { ...settings, skus: undefined }));
    expect(event.order.items).toEqual([
      { sku: "PEN", name: "Woo Single #1", quantity: 2, price: "3.33" },
      { sku: "PEN", name: "Woo Single #1", quantity: 1, price: "3.34" },
    ]);
    expect(event.order.total).toBe("20.00");
    expect(event.order.tax).toBe("0.00");
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("reads unpadded amounts as WooCommerce writes them", () => {
    const line = wooVariationLine({ total: "12", total_tax: "0.9" });
    const order = wooOrder({ line_items: [line], shipping_lines: [wooShippingLine({ total: "5.5", total_tax: "0" })] });
    const { event } = paid(readOrder({ ...order, total: "18.4", total_tax: "0.9" }));
    expect(event.order.items).toEqual([expect.objectContaining({ sku: "BAR-3", quantity: 1, price: "12.90" })]);
    expect(event.order.delivery?.price).toBe("5.50");
    expect(event.order.total).toBe("18.40");
    expect(event.order.tax).toBe("0.90");
  });

  it("adds up every shipping line, with its tax", () => {
    const lines = [
      wooShippingLine({ total: "10.00", total_tax: "2.00" }),
      wooShippingLine({ id: 319, method_id: "local_pickup", total: "1.50", total_tax: "0.30" }),
    ];
    const order = wooOrder({ shipping_lines: lines, shipping_total: "11.50", shipping_tax: "2.30", total: "33.15" });
    const { event } = paid(readOrder(order));
    expect(cents(event.order.delivery?.price ?? "")).toBe(
      lines.reduce((sum, line) => sum + cents(line.total) + cents(line.total_tax), 0),
    );
    expect(event.order.delivery?.method).toBe("flat_rate");
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("names the shipping method through the sender's map", () => {
    const { event } = paid(
      readOrder(wooOrder(), {}, { ...settings, shippingMethods: new Map([["flat_rate", "COURIER"]]) }),
    );
    expect(event.order.delivery?.method).toBe("COURIER");
  });

  it("ignores price, the float: the money comes from the strings", () => {
    const order = wooOrder({ line_items: [wooLineItem({ price: 3.0000001 }), wooVariationLine({ price: 11.99 })] });
    expect(paid(readOrder(order)).event).toStrictEqual(paid(readOrder(wooOrder())).event);
  });

  it("books a fee as an item whose article is mapped under fee:<name>", () => {
    const fee = wooFeeLine({ name: "Gift wrap", total: "5.00", total_tax: "0.50" });
    const order = wooOrder({ fee_lines: [fee], total: "34.85", total_tax: "1.85" });
    const skus = new Map([...SKUS, ["fee:Gift wrap", "WRAP"]]);
    const { event } = paid(readOrder(order, {}, { ...settings, skus }));
    expect(event.order.items).toContainEqual({ sku: "WRAP", name: "Gift wrap", quantity: 1, price: "5.50" });
    expect(itemsCents(event, "WRAP")).toBe(cents(fee.total) + cents(fee.total_tax));
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("leaves out a fee of zero", () => {
    const order = wooOrder({ fee_lines: [wooFeeLine({ name: "Free wrap", total: "0.00", total_tax: "0.00" })] });
    expect(paid(readOrder(order)).event).toStrictEqual(paid(readOrder(wooOrder())).event);
  });

  it("keeps an order with an unmapped fee for support, naming the key to map", () => {
    const order = wooOrder({ fee_lines: [wooFeeLine({ name: "Gift wrap" })], total: "34.35" });
    const reading = readOrder(order);
    expect(reading).toMatchObject({ kind: "unmapped", key: "woocommerce:727:20170322192808" });
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/fee "Gift wrap".*"fee:Gift wrap"/);
    // Without a SKU map there is nothing a fee could be booked as either.
    const withSkus = { ...order, line_items: [wooLineItem({ sku: "WS-1" }), wooVariationLine()] };
    const unmapped = readOrder(withSkus, {}, { ...settings, skus: undefined });
    expect(unmapped.kind).toBe("unmapped");
    expect(unmapped.kind === "unmapped" && unmapped.reason).toMatch(/"fee:Gift wrap"/);
  });

  it("keeps an order whose lines and shipping do not add up to its total, with both figures", () => {
    const reading = readOrder(wooOrder({ total: "29.36" }));
    expect(reading).toMatchObject({ kind: "unmapped", key: "woocommerce:727:20170322192808" });
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/29\.36.*29\.35/);
  });

  it("keeps an order in a currency the sender did not configure", () => {
    const reading = readOrder(wooOrder(), {}, { ...settings, currency: "EUR" });
    expect(reading).toMatchObject({ kind: "unmapped", key: "woocommerce:727:20170322192808" });
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/USD.*EUR/);
  });

  it("books the payload's currency when the sender configured none", () => {
    const order = wooOrder({ currency: "EUR" });
    expect(paid(readOrder(order, {}, { ...settings, currency: undefined })).event.order.currency).toBe("EUR");
  });
});

/** "-10.00" → -1000: a fee's amounts may be negative (a discount added as a fee). */
function signedCents(amount: string): number {
  return amount.startsWith("-") ? -cents(amount.slice(1)) : cents(amount);
}

/** A line's gross from the payload: its total plus its tax. */
const grossCents = (line: { total: string; total_tax: string }): number =>
  signedCents(line.total) + signedCents(line.total_tax);

/** One taxed line at `total` with `tax` as WooCommerce writes it, the one tax rate 75. */
function taxedLine(id: number, sku: string, total: string, tax: string) {
  return wooLineItem({
    id,
    name: sku,
    sku,
    quantity: 1,
    subtotal: total,
    subtotal_tax: tax,
    total,
    total_tax: tax,
    taxes: [{ id: 75, total: tax, subtotal: tax }],
    price: Number(total),
  });
}

const noSkuMap: SourceSettings = { ...settings, skus: undefined };

describe("WooCommerce read: tax rounded at subtotal level (woocommerce_tax_round_at_subtotal)", () => {
  // With "Round tax at subtotal level" WooCommerce keeps each line's tax unrounded and
  // rounds the order's cart_tax / total_tax once, while the webhook writes each line's
  // total_tax rounded on its own (woocommerce/woocommerce#25720): the lines may miss
  // the order's total by a cent or so.
  const noShipping = { shipping_lines: [], shipping_total: "0.00", shipping_tax: "0.00" };

  it("books three lines of 0.99 at 7.5 % at the 3.19 the order says was paid", () => {
    // Each line's tax is 0.07425, written 0.07; the order's is 3 × 0.07425 = 0.22275, written 0.22.
    const lines = ["A", "B", "C"].map((sku, index) => taxedLine(400 + index, sku, "0.99", "0.07"));
    const order = wooOrder({ line_items: lines, ...noShipping, cart_tax: "0.22", total_tax: "0.22", total: "3.19" });
    const addedUp = lines.reduce((sum, line) => sum + grossCents(line), 0);
    expect(addedUp).not.toBe(cents(order.total));
    const { event } = paid(readOrder(order, {}, noSkuMap));
    expect(event.order.total).toBe(order.total);
    expect(event.order.tax).toBe(order.total_tax);
    expect(paidCents(event)).toBe(cents(order.total));
    for (const line of lines) expect(Math.abs(itemsCents(event, line.sku) - grossCents(line))).toBeLessThanOrEqual(1);
  });

  it("takes a cent off when the lines' rounded taxes add up to more than the order's", () => {
    // 0.45 at 19 %: 0.0855 a line, written 0.09; the order's 0.171, written 0.17.
    const lines = ["A", "B"].map((sku, index) => taxedLine(410 + index, sku, "0.45", "0.09"));
    const order = wooOrder({ line_items: lines, ...noShipping, cart_tax: "0.17", total_tax: "0.17", total: "1.07" });
    const { event } = paid(readOrder(order, {}, noSkuMap));
    expect(paidCents(event)).toBe(cents(order.total));
    expect(event.order.tax).toBe(order.total_tax);
  });

  it("keeps shipping at what the order says it cost when the cent is the lines'", () => {
    // Lines and shipping of 0.45 at 19 %: cart_tax 0.171 → 0.17, shipping_tax 0.0855 → 0.09.
    const lines = ["A", "B"].map((sku, index) => taxedLine(420 + index, sku, "0.45", "0.09"));
    const shipping = wooShippingLine({
      total: "0.45",
      total_tax: "0.09",
      taxes: [{ id: 75, total: "0.09", subtotal: "" }],
    });
    const order = wooOrder({
      line_items: lines,
      shipping_lines: [shipping],
      shipping_total: "0.45",
      shipping_tax: "0.09",
      cart_tax: "0.17",
      total_tax: "0.26",
      total: "1.61",
    });
    const { event } = paid(readOrder(order, {}, noSkuMap));
    expect(cents(event.order.delivery?.price ?? "")).toBe(cents(order.shipping_total) + cents(order.shipping_tax));
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("takes the shipping's cent off the shipping when two shipping lines were rounded apart", () => {
    // One line of 10.00 + 1.90; two shipping lines of 0.45 at 19 % (0.0855 each, written
    // 0.09): shipping_tax 0.171 → 0.17, total_tax 2.071 → 2.07, total 12.971 → 12.97.
    const line = taxedLine(430, "A", "10.00", "1.90");
    const shipping = [431, 432].map((id) =>
      wooShippingLine({ id, total: "0.45", total_tax: "0.09", taxes: [{ id: 75, total: "0.09", subtotal: "" }] }),
    );
    const order = wooOrder({
      line_items: [line],
      shipping_lines: shipping,
      shipping_total: "0.90",
      shipping_tax: "0.17",
      cart_tax: "1.90",
      total_tax: "2.07",
      total: "12.97",
    });
    const { event } = paid(readOrder(order, {}, noSkuMap));
    expect(cents(event.order.delivery?.price ?? "")).toBe(cents(order.shipping_total) + cents(order.shipping_tax));
    expect(itemsCents(event, "A")).toBe(grossCents(line));
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("keeps an order whose lines miss its taxes by more than a cent a taxed line, with both figures", () => {
    const lines = ["A", "B", "C"].map((sku, index) => taxedLine(440 + index, sku, "0.99", "0.07"));
    // The order says 0.26 of tax and 3.23 paid: 4 cents more than the lines, for 3 taxed lines.
    const order = wooOrder({ line_items: lines, ...noShipping, cart_tax: "0.26", total_tax: "0.26", total: "3.23" });
    const reading = readOrder(order, {}, noSkuMap);
    expect(reading.kind).toBe("unmapped");
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/3\.23.*3\.18/);
  });

  it("keeps an order whose cent is not in its taxes: they agree with the lines", () => {
    const lines = ["A", "B", "C"].map((sku, index) => taxedLine(450 + index, sku, "0.99", "0.07"));
    const order = wooOrder({ line_items: lines, ...noShipping, cart_tax: "0.21", total_tax: "0.21", total: "3.19" });
    expect(readOrder(order, {}, noSkuMap).kind).toBe("unmapped");
  });
});

describe("WooCommerce read: a negative fee (a discount added as a fee)", () => {
  const kettle = taxedLine(500, "KETTLE", "100.00", "20.00");
  const prepayment = wooFeeLine({
    name: "Prepayment discount",
    total: "-10.00",
    total_tax: "-2.00",
    taxes: [{ id: 75, total: "-2.00", subtotal: "" }],
  });
  const noShipping = { shipping_lines: [], shipping_total: "0.00", shipping_tax: "0.00" };

  it("books the discount off the line: what the order says was paid", () => {
    const order = wooOrder({
      line_items: [kettle],
      fee_lines: [prepayment],
      ...noShipping,
      cart_tax: "18.00",
      total_tax: "18.00",
      total: "108.00",
    });
    const { event } = paid(readOrder(order, {}, noSkuMap));
    expect(event.order.total).toBe(order.total);
    expect(event.order.tax).toBe(order.total_tax);
    expect(paidCents(event)).toBe(cents(order.total));
    expect(itemsCents(event, "KETTLE")).toBe(grossCents(kettle) + grossCents(prepayment));
    expect(event.order.items.map((item) => item.sku)).toEqual(["KETTLE"]);
  });

  it("spreads it over the lines in proportion to what each costs", () => {
    const jug = taxedLine(501, "JUG", "50.00", "10.00");
    const fee = { ...prepayment, total: "-15.00", total_tax: "-3.00" };
    const order = wooOrder({
      line_items: [kettle, jug],
      fee_lines: [fee],
      ...noShipping,
      cart_tax: "27.00",
      total_tax: "27.00",
      total: "162.00",
    });
    const { event } = paid(readOrder(order, {}, noSkuMap));
    expect(paidCents(event)).toBe(cents(order.total));
    const lines = grossCents(kettle) + grossCents(jug);
    const discount = -grossCents(fee);
    expect(itemsCents(event, "KETTLE")).toBe(grossCents(kettle) - (discount * grossCents(kettle)) / lines);
    expect(itemsCents(event, "JUG")).toBe(grossCents(jug) - (discount * grossCents(jug)) / lines);
  });

  it("books it with a charged fee beside it, the fee at its own price", () => {
    const wrap = wooFeeLine({
      name: "Gift wrap",
      total: "5.00",
      total_tax: "1.00",
      taxes: [{ id: 75, total: "1.00", subtotal: "" }],
    });
    const order = wooOrder({
      line_items: [kettle],
      fee_lines: [wrap, prepayment],
      ...noShipping,
      cart_tax: "19.00",
      total_tax: "19.00",
      total: "114.00",
    });
    const skus = new Map([
      ["KETTLE", "KETTLE"],
      ["fee:Gift wrap", "WRAP"],
    ]);
    const { event } = paid(readOrder(order, {}, { ...settings, skus }));
    expect(itemsCents(event, "WRAP")).toBe(grossCents(wrap));
    expect(paidCents(event)).toBe(cents(order.total));
  });

  it("keeps an order whose negative fee is more than its lines cost, naming it", () => {
    // WooCommerce lets a negative fee go down to the lines plus shipping.
    const cheap = taxedLine(502, "SPOON", "5.00", "0.00");
    const fee = wooFeeLine({ name: "Loyalty", total: "-8.00", total_tax: "0.00" });
    const order = wooOrder({
      line_items: [cheap],
      fee_lines: [fee],
      cart_tax: "0.00",
      total_tax: "0.00",
      total: "7.00",
    });
    const reading = readOrder(order, {}, noSkuMap);
    expect(reading).toMatchObject({ kind: "unmapped", key: "woocommerce:727:20170322192808" });
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/"Loyalty".*more than the line items cost/);
  });
});

describe("WooCommerce read: SKUs", () => {
  it("keeps an order with a SKU missing from the sender's map, naming the SKU", () => {
    const order = wooOrder({ line_items: [wooLineItem(), wooVariationLine({ sku: "Bar4" })] });
    const reading = readOrder(order);
    expect(reading.kind).toBe("unmapped");
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/"Bar4"/);
  });

  it("finds a line without a SKU by its variation first, then its product", () => {
    const order = wooOrder({ line_items: [wooLineItem(), wooVariationLine({ sku: "" })] });
    const byVariation = new Map([...SKUS, ["variation:23", "BAR-3-BLACK-M"], ["product:22", "BAR-ANY"]]);
    expect(paid(readOrder(order, {}, { ...settings, skus: byVariation })).event.order.items[2]?.sku).toBe(
      "BAR-3-BLACK-M",
    );
    const byProduct = new Map([...SKUS, ["product:22", "BAR-ANY"]]);
    expect(paid(readOrder(order, {}, { ...settings, skus: byProduct })).event.order.items[2]?.sku).toBe("BAR-ANY");
  });

  it("passes SKUs as they are without a map, and keeps an order whose line has none", () => {
    const withSkus = wooOrder({ line_items: [wooLineItem({ sku: "WS-1" }), wooVariationLine()] });
    expect(paid(readOrder(withSkus, {}, { ...settings, skus: undefined })).event.order.items.map((i) => i.sku)).toEqual(
      ["WS-1", "WS-1", "Bar3"],
    );
    const reading = readOrder(wooOrder(), {}, { ...settings, skus: undefined });
    expect(reading.kind).toBe("unmapped");
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/no SKU/);
  });
});

describe("WooCommerce read: the customer and the payment", () => {
  it("names a registered customer by id and the payment by its transaction id", () => {
    const order = wooOrder({ customer_id: 26, payment_method: "stripe", transaction_id: "ch_3MqBnH2eZvKYlo2C1" });
    const { event } = paid(readOrder(order));
    expect(event.order.customer.id).toBe("26");
    expect(event.payment).toMatchObject({ id: "ch_3MqBnH2eZvKYlo2C1", provider: "stripe" });
  });

  it("names a company buyer by the company, and a nameless one by the order", () => {
    const base = wooOrder().billing;
    const company = wooOrder({ billing: { ...base, first_name: "", last_name: "", company: "Acme Ltd" } });
    expect(paid(readOrder(company)).event.order.customer.name).toBe("Acme Ltd");
    const nameless = wooOrder({ billing: { ...base, first_name: "", last_name: "", email: "", phone: "" } });
    expect(paid(readOrder(nameless)).event.order.customer).toEqual({ name: "WooCommerce order 727" });
  });

  it("never fails a paid order over a contact the schema would refuse", () => {
    const order = wooOrder({ billing: { ...wooOrder().billing, email: "not an e-mail", phone: "call me" } });
    expect(paid(readOrder(order)).event.order.customer).toEqual({ name: "John Doe" });
  });
});

describe("WooCommerce read: not paid", () => {
  const unpaid: Array<[string, Partial<WooOrder>, RegExp]> = [
    [
      "pending",
      { status: "pending", date_paid: null, date_paid_gmt: null },
      /status is "pending".*date_paid_gmt is null/,
    ],
    ["on-hold", { status: "on-hold", date_paid: null, date_paid_gmt: null }, /status is "on-hold"/],
    ["failed", { status: "failed", date_paid: null, date_paid_gmt: null }, /status is "failed"/],
    ["cancelled", { status: "cancelled", date_paid: null, date_paid_gmt: null }, /status is "cancelled"/],
    // A refunded order keeps its payment date: the status alone says it is not to be booked.
    ["refunded", { status: "refunded" }, /status is "refunded", not "processing" or "completed"$/],
    // Order 723 in the docs: a bank transfer marked completed by hand, never paid.
    [
      "completed without date_paid",
      { status: "completed", date_paid: null, date_paid_gmt: null },
      /status is "completed", but date_paid_gmt is null/,
    ],
    ["processing without date_paid", { status: "processing", date_paid_gmt: null }, /date_paid_gmt is null/],
  ];

  it.each(unpaid)("acknowledges and ignores %s, with the reason", (_name, overrides, reason) => {
    const reading = readOrder(wooOrder(overrides));
    expect(reading).toMatchObject({ kind: "ignored", key: "woocommerce:727" });
    expect(reading.kind === "ignored" && reading.reason).toMatch(reason);
    expect(reading.kind === "ignored" && reading.ids).toMatchObject({ order_id: "727", status: overrides.status });
  });

  it("ignores another resource's webhook without an order key", () => {
    const product = { id: 93, name: "Woo Single #1", status: "publish" };
    const reading = readOrder(product, { topic: "product.updated" });
    expect(reading).toMatchObject({ kind: "ignored", key: null });
    expect(reading.kind === "ignored" && reading.reason).toMatch(/"product"/);
  });

  it("ignores an action webhook", () => {
    const reading = readOrder(
      { action: "woocommerce_payment_complete", arg: 727 },
      { topic: "action.woocommerce_payment_complete" },
    );
    expect(reading).toMatchObject({ kind: "ignored", key: null });
    expect(reading.kind === "ignored" && reading.reason).toMatch(/action/);
  });

  it("ignores a deleted order", () => {
    const reading = readOrder({ id: 727 }, { topic: "order.deleted" });
    expect(reading).toMatchObject({ kind: "ignored", key: "woocommerce:727" });
    expect(reading.kind === "ignored" && reading.reason).toMatch(/deleted/);
  });
});

describe("WooCommerce read: malformed bodies", () => {
  it.each([
    ["not JSON", "webhook_id=142"],
    ["empty", ""],
    ["an array", "[727]"],
    ["a string", '"727"'],
    ["an order without id", JSON.stringify({ ...wooOrder(), id: undefined })],
    ["an id written as a string", JSON.stringify({ ...wooOrder(), id: "727" })],
    ["a fractional id", JSON.stringify({ ...wooOrder(), id: 727.5 })],
  ])("refuses %s", (_name, body) => {
    expect(adapter.read(delivery(body, wooHeaders(body)), settings).kind).toBe("malformed");
  });

  it("refuses bytes that are not UTF-8", () => {
    const body = Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    expect(adapter.read(delivery(body, wooHeaders(body)), settings).kind).toBe("malformed");
  });

  it("keeps a paid order whose payment date it cannot read, under the order's key", () => {
    const reading = readOrder(wooOrder({ date_paid_gmt: "22/03/2017 19:28" }));
    expect(reading).toMatchObject({ kind: "unmapped", key: "woocommerce:727" });
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/date_paid_gmt/);
  });

  it("keeps a paid order the gateway itself would refuse, with the gateway's reason", () => {
    const reading = readOrder(wooOrder({ date_paid_gmt: "2017-13-45T19:28:08" }));
    expect(reading).toMatchObject({ kind: "unmapped", key: "woocommerce:727:20171345192808" });
    expect(reading.kind === "unmapped" && reading.reason).toMatch(/\/occurred_at/);
  });
});
