import { describe, expect, it } from "vitest";
import { admitOrderPaid } from "../../src/accept/admit-order-paid.ts";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import type { Reading, SourceSettings, WebhookDelivery } from "../../src/sources/port.ts";
import { shopifyAdapter } from "../../src/sources/shopify.ts";
import { expectCanonicalKeyOrder } from "../support/canonical-order.ts";
import {
  moneySet,
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  SHOPIFY_TEST_VECTOR,
  type ShopifyHeaderOptions,
  type ShopifyOrder,
  shopifyBody,
  shopifyHeaders,
  shopifyLineItem,
  shopifyOrder,
  shopifyShippingLine,
  shopifyTipLine,
  sign,
} from "../support/platforms/shopify.ts";

const settings = (more: Partial<SourceSettings> = {}): SourceSettings => ({
  sender: "shop",
  platform: "shopify",
  secrets: [SHOPIFY_SECRET],
  ...more,
});

function delivery(body: string | Buffer, options: ShopifyHeaderOptions = {}): WebhookDelivery {
  const raw = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return { headers: shopifyHeaders(raw, options), raw, receivedAt: Date.UTC(2026, 2, 1, 7, 0, 2) };
}

function readOrder(order: ShopifyOrder, more: Partial<SourceSettings> = {}, options: ShopifyHeaderOptions = {}) {
  return shopifyAdapter.read(delivery(shopifyBody(order), options), settings(more));
}

/** The event of a paid reading, checked the way the gateway checks a sender's event. */
function paidEvent(reading: Reading): OrderPaidEvent {
  if (reading.kind !== "paid") throw new Error(`expected a paid reading, got ${JSON.stringify(reading)}`);
  const admission = admitOrderPaid(reading.event, undefined);
  expect(admission.ok, JSON.stringify(admission)).toBe(true);
  expectCanonicalKeyOrder(reading.event);
  return reading.event;
}

/** A payload amount in cents, the test's own arithmetic on Shopify's decimal strings. */
const cents = (amount: string): number => Math.round(Number(amount) * 100);

function itemsAndDelivery(event: OrderPaidEvent): number {
  const items = event.order.items.reduce((sum, item) => sum + item.quantity * cents(item.price), 0);
  return items + cents(event.order.delivery?.price ?? "0.00");
}

describe("Shopify adapter: the platform's contract", () => {
  it("answers in its own JSON style well inside Shopify's 5 s, and has no ping", () => {
    expect(shopifyAdapter.platform).toBe("shopify");
    expect(shopifyAdapter.answerStyle).toBe("json");
    expect(shopifyAdapter.answerWithinMs).toBe(5000);
    expect(shopifyAdapter.isPing).toBeUndefined();
  });
});

describe("Shopify adapter: verify", () => {
  const body = shopifyBody(shopifyOrder());

  it("accepts the documented test vector (openssl, §1.2), and the fixture's sign computes it", () => {
    const { secret, body: vectorBody, hmac } = SHOPIFY_TEST_VECTOR;
    expect(sign(vectorBody, secret)).toBe(hmac);
    const headers = { ...shopifyHeaders(vectorBody), "x-shopify-hmac-sha256": hmac };
    const result = shopifyAdapter.verify(
      { headers, raw: Buffer.from(vectorBody), receivedAt: 0 },
      settings({ secrets: [secret] }),
    );
    // The verified signature identifies the bytes: the intake recognises a retry by it.
    expect(result).toEqual({ ok: true, digest: hmac });
  });

  it("refuses the test vector with one bit of the signature flipped", () => {
    const { secret, body: vectorBody, hmac } = SHOPIFY_TEST_VECTOR;
    const bytes = Buffer.from(hmac, "base64");
    bytes[0] = (bytes[0] as number) ^ 0x01;
    const headers = { ...shopifyHeaders(vectorBody), "x-shopify-hmac-sha256": bytes.toString("base64") };
    const result = shopifyAdapter.verify(
      { headers, raw: Buffer.from(vectorBody), receivedAt: 0 },
      settings({ secrets: [secret] }),
    );
    expect(result.ok).toBe(false);
  });

  it("accepts a delivery signed with the sender's secret", () => {
    expect(shopifyAdapter.verify(delivery(body), settings())).toMatchObject({ ok: true });
  });

  it("refuses another secret's signature", () => {
    const result = shopifyAdapter.verify(delivery(body, { secret: "shpss_other" }), settings());
    expect(result.ok).toBe(false);
  });

  it("verifies with either secret during a rotation", () => {
    const rotating = settings({ secrets: ["shpss_new", SHOPIFY_SECRET] });
    expect(shopifyAdapter.verify(delivery(body), rotating)).toMatchObject({ ok: true });
    expect(shopifyAdapter.verify(delivery(body, { secret: "shpss_new" }), rotating)).toMatchObject({ ok: true });
    expect(shopifyAdapter.verify(delivery(body, { secret: "shpss_gone" }), rotating).ok).toBe(false);
  });

  it("refuses a body with one byte changed", () => {
    const signed = delivery(body);
    const tampered = Buffer.from(signed.raw);
    const at = tampered.indexOf("110.00");
    tampered[at] = "9".charCodeAt(0);
    expect(shopifyAdapter.verify({ ...signed, raw: tampered }, settings()).ok).toBe(false);
  });

  it("refuses a truncated signature", () => {
    const signed = delivery(body);
    const hmac = signed.headers["x-shopify-hmac-sha256"] as string;
    const headers = { ...signed.headers, "x-shopify-hmac-sha256": hmac.slice(0, -4) };
    expect(shopifyAdapter.verify({ ...signed, headers }, settings()).ok).toBe(false);
  });

  it("refuses a repeated signature header, though one copy is right", () => {
    const signed = delivery(body);
    const hmac = signed.headers["x-shopify-hmac-sha256"] as string;
    const headers = { ...signed.headers, "x-shopify-hmac-sha256": [hmac, hmac] };
    expect(shopifyAdapter.verify({ ...signed, headers }, settings())).toEqual({
      ok: false,
      detail: expect.stringContaining("X-Shopify-Hmac-Sha256"),
    });
  });

  it.each([
    ["x-shopify-hmac-sha256", "X-Shopify-Hmac-Sha256"],
    ["x-shopify-topic", "X-Shopify-Topic"],
    ["x-shopify-shop-domain", "X-Shopify-Shop-Domain"],
    ["x-shopify-api-version", "X-Shopify-API-Version"],
    ["x-shopify-webhook-id", "X-Shopify-Webhook-Id"],
  ])("refuses a delivery without %s, as Shopify's library does, naming it", (name, display) => {
    const signed = delivery(body);
    const headers = { ...signed.headers };
    delete headers[name];
    const result = shopifyAdapter.verify({ ...signed, headers }, settings());
    expect(result).toEqual({ ok: false, detail: expect.stringContaining(display) });
  });

  it("does not require X-Shopify-Event-Id or X-Shopify-Triggered-At", () => {
    const signed = delivery(body);
    const headers = { ...signed.headers };
    delete headers["x-shopify-event-id"];
    delete headers["x-shopify-triggered-at"];
    expect(shopifyAdapter.verify({ ...signed, headers }, settings())).toMatchObject({ ok: true });
  });

  it("refuses another shop's delivery signed with the same app secret, when the sender names its shop", () => {
    const own = settings({ shopDomain: SHOPIFY_SHOP });
    expect(shopifyAdapter.verify(delivery(body), own)).toMatchObject({ ok: true });
    const other = shopifyAdapter.verify(delivery(body, { shopDomain: "other.myshopify.com" }), own);
    expect(other).toEqual({ ok: false, detail: expect.stringContaining("X-Shopify-Shop-Domain") });
  });

  it("compares the shop domain without regard to case", () => {
    const own = settings({ shopDomain: "Example.MyShopify.com" });
    expect(shopifyAdapter.verify(delivery(body, { shopDomain: "EXAMPLE.myshopify.com" }), own)).toMatchObject({
      ok: true,
    });
  });
});

describe("Shopify adapter: a paid order (§1.7, tax included)", () => {
  const payload = shopifyOrder();
  const headers: ShopifyHeaderOptions = {
    webhookId: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
    eventId: "7c8e3b7e-1f0b-4b5e-9f64-1a5b0b2f4c11",
    triggeredAt: "2026-03-01T07:00:01.123Z",
  };
  const reading = readOrder(payload, {}, headers);
  const event = paidEvent(reading);
  const line = payload.line_items[0] as (typeof payload.line_items)[number];
  const shipping = payload.shipping_lines[0] as (typeof payload.shipping_lines)[number];

  it("is keyed by the order's id from admin_graphql_api_id, every digit kept", () => {
    expect(payload.admin_graphql_api_id).toBe("gid://shopify/Order/820982911946154508");
    expect(event.event_id).toBe("shopify:820982911946154508");
    expect(event.order.id).toBe("820982911946154508");
    expect(event.payment.id).toBe("820982911946154508");
    expect(event.event_type).toBe("order.paid");
  });

  it("books the money the payload says was paid: total, tax, shipping", () => {
    expect(event.order.currency).toBe(payload.currency);
    expect(event.payment.currency).toBe(payload.currency);
    expect(event.order.total).toBe(payload.total_price);
    expect(event.payment.amount).toBe(payload.total_price);
    expect(event.order.tax).toBe(payload.total_tax);
    // Tax included: the shipping line's price already holds its VAT.
    expect(event.order.delivery?.price).toBe(shipping.price);
    expect(event.order.delivery?.price).toBe(payload.total_shipping_price_set.shop_money.amount);
    expect(itemsAndDelivery(event)).toBe(cents(payload.total_price));
  });

  it("maps the line and the shipping line", () => {
    expect(event.order.items).toEqual([
      { sku: line.sku, name: line.title, quantity: line.quantity, price: line.price },
    ]);
    expect(event.order.delivery?.method).toBe(shipping.code);
    expect(event.order.delivery?.address).toBe("ul. Lenina 1, Moskva, 101000, RU");
  });

  it("names the order and its customer", () => {
    expect(event.order.number).toBe(payload.name);
    expect(event.order.created_at).toBe(payload.created_at);
    // No processed_at in the sample: the order's creation is when it happened.
    expect(event.occurred_at).toBe(payload.created_at);
    expect(event.order.customer).toEqual({ name: "Jon Doe", email: payload.email });
  });

  it("keeps Shopify's own ids for support, outside the event", () => {
    expect(reading.kind === "paid" && reading.ids).toEqual({
      webhook_id: headers.webhookId,
      event_id: headers.eventId,
      topic: "orders/paid",
      shop_domain: SHOPIFY_SHOP,
      api_version: "2025-01",
      triggered_at: headers.triggeredAt,
      order_id: "820982911946154508",
      order_name: "#1001",
    });
  });

  it("maps a retry, or a second subscription's webhook, to the identical event", () => {
    const body = shopifyBody(payload);
    const first = shopifyAdapter.read(delivery(body, headers), settings());
    const retry = shopifyAdapter.read(
      delivery(body, { webhookId: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", triggeredAt: "2026-03-01T07:05:00Z" }),
      settings(),
    );
    expect(paidEvent(retry)).toEqual(paidEvent(first));
    expect(JSON.stringify(paidEvent(retry))).toBe(JSON.stringify(paidEvent(first)));
    expect(retry.kind === "paid" && retry.ids.webhook_id).toBe("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  });
});

describe("Shopify adapter: taxes not included, with discounts", () => {
  // 3 × 25.00 with a 5.00 discount and 10 % VAT on top (7.00), 1 × 12.00 with VAT 1.20,
  // shipping 15.00 with a 5.00 shipping discount and VAT 1.00: 77.00 + 13.20 + 11.00 = 101.20.
  const coffee = shopifyLineItem({
    id: 466157049,
    variant_id: 39072856,
    product_id: 632910392,
    sku: "SKU-002",
    title: "Coffee",
    quantity: 3,
    price: "25.00",
    price_set: moneySet("25.00", "EUR"),
    total_discount: "5.00",
    discount_allocations: [{ amount: "5.00", amount_set: moneySet("5.00", "EUR"), discount_application_index: 0 }],
    tax_lines: [{ title: "VAT", rate: 0.1, price: "7.00", price_set: moneySet("7.00", "EUR") }],
  });
  const mug = shopifyLineItem({
    id: 518995019,
    variant_id: 49148385,
    product_id: 632910393,
    sku: "SKU-003",
    title: "Mug",
    quantity: 1,
    price: "12.00",
    price_set: moneySet("12.00", "EUR"),
    tax_lines: [{ title: "VAT", rate: 0.1, price: "1.20", price_set: moneySet("1.20", "EUR") }],
  });
  const shippingLine = shopifyShippingLine({
    id: 369256396,
    code: "dhl-express",
    title: "DHL Express",
    price: "15.00",
    price_set: moneySet("15.00", "EUR"),
    discounted_price: "10.00",
    discounted_price_set: moneySet("10.00", "EUR"),
    discount_allocations: [{ amount: "5.00", amount_set: moneySet("5.00", "EUR"), discount_application_index: 1 }],
    tax_lines: [{ title: "VAT", rate: 0.1, price: "1.00", price_set: moneySet("1.00", "EUR") }],
  });
  const payload = shopifyOrder({
    id: 450789469,
    admin_graphql_api_id: "gid://shopify/Order/450789469",
    name: "#1002",
    order_number: 1002,
    currency: "EUR",
    presentment_currency: "EUR",
    taxes_included: false,
    processed_at: "2026-03-02T12:30:05+01:00",
    created_at: "2026-03-02T12:29:58+01:00",
    total_price: "101.20",
    subtotal_price: "82.00",
    total_tax: "9.20",
    total_discounts: "10.00",
    current_total_price: "101.20",
    total_price_set: moneySet("101.20", "EUR"),
    total_tax_set: moneySet("9.20", "EUR"),
    total_shipping_price_set: moneySet("11.00", "EUR"),
    payment_gateway_names: ["shopify_payments"],
    line_items: [coffee, mug],
    shipping_lines: [shippingLine],
  });
  const event = paidEvent(readOrder(payload, { currency: "EUR" }));

  it("books what was paid: the total, the tax added on top, the shipping after its discount with its tax", () => {
    expect(event.order.total).toBe(payload.total_price);
    expect(event.payment.amount).toBe(payload.total_price);
    expect(event.order.tax).toBe(payload.total_tax);
    const shippingPaid = cents(shippingLine.discounted_price) + cents(shippingLine.tax_lines[0]?.price ?? "x");
    expect(cents(event.order.delivery?.price ?? "x")).toBe(shippingPaid);
    expect(event.order.delivery?.method).toBe(shippingLine.code);
    expect(itemsAndDelivery(event)).toBe(cents(payload.total_price));
  });

  it("charges each line after its discounts, with its tax", () => {
    const paidFor = (sku: string) =>
      event.order.items.filter((item) => item.sku === sku).reduce((s, i) => s + i.quantity * cents(i.price), 0);
    const linePaid = (item: typeof coffee) =>
      item.quantity * cents(item.price) -
      item.discount_allocations.reduce((s, d) => s + cents(d.amount), 0) +
      item.tax_lines.reduce((s, t) => s + cents(t.price), 0);
    expect(paidFor("SKU-002")).toBe(linePaid(coffee));
    expect(paidFor("SKU-003")).toBe(linePaid(mug));
  });

  it("splits a line whose paid total does not divide by its quantity, to the cent", () => {
    // 77.00 for 3 units: 25.66 + 2 × 25.67.
    expect(event.order.items.filter((item) => item.sku === "SKU-002")).toEqual([
      { sku: "SKU-002", name: "Coffee", quantity: 1, price: "25.66" },
      { sku: "SKU-002", name: "Coffee", quantity: 2, price: "25.67" },
    ]);
  });

  it("takes the payment's time and provider from the order", () => {
    expect(event.event_id).toBe("shopify:450789469");
    expect(event.occurred_at).toBe(payload.processed_at);
    expect(event.payment.paid_at).toBe(payload.processed_at);
    expect(event.order.created_at).toBe(payload.created_at);
    expect(event.payment.provider).toBe("shopify_payments");
  });
});

describe("Shopify adapter: the shop's currency or the customer's", () => {
  // A USD shop selling in EUR: every amount comes in both, in the *_set pairs.
  const usdEur = (usd: string, eur: string) => moneySet(usd, "USD", { amount: eur, currency: "EUR" });
  const payload = shopifyOrder({
    currency: "USD",
    presentment_currency: "EUR",
    taxes_included: false,
    total_price: "27.50",
    subtotal_price: "20.00",
    total_tax: "2.50",
    current_total_price: "27.50",
    total_price_set: usdEur("27.50", "24.75"),
    total_tax_set: usdEur("2.50", "2.25"),
    total_shipping_price_set: usdEur("5.50", "4.95"),
    line_items: [
      shopifyLineItem({
        quantity: 1,
        price: "20.00",
        price_set: usdEur("20.00", "18.00"),
        tax_lines: [{ title: "Sales tax", rate: 0.1, price: "2.00", price_set: usdEur("2.00", "1.80") }],
      }),
    ],
    shipping_lines: [
      shopifyShippingLine({
        price: "5.00",
        price_set: usdEur("5.00", "4.50"),
        discounted_price: "5.00",
        tax_lines: [{ title: "Sales tax", rate: 0.1, price: "0.50", price_set: usdEur("0.50", "0.45") }],
      }),
    ],
  });

  it("books the shop's currency by default", () => {
    const event = paidEvent(readOrder(payload));
    expect(event.order.currency).toBe(payload.currency);
    expect(event.order.total).toBe(payload.total_price);
    expect(event.order.tax).toBe(payload.total_tax);
    expect(itemsAndDelivery(event)).toBe(cents(payload.total_price));
  });

  it("books what the customer paid when the sender chooses the presentment currency", () => {
    const event = paidEvent(readOrder(payload, { money: "presentment", currency: "EUR" }));
    expect(event.order.currency).toBe(payload.presentment_currency);
    expect(event.payment.currency).toBe(payload.presentment_currency);
    expect(event.order.total).toBe(payload.total_price_set.presentment_money.amount);
    expect(event.order.tax).toBe(payload.total_tax_set?.presentment_money.amount);
    expect(itemsAndDelivery(event)).toBe(cents(payload.total_price_set.presentment_money.amount));
  });

  it("leaves unmapped a presentment amount Shopify sent only in the shop's currency", () => {
    const line = payload.line_items[0] as (typeof payload.line_items)[number];
    const { price_set: _dropped, ...withoutSet } = line;
    const reading = readOrder({ ...payload, line_items: [withoutSet] }, { money: "presentment" });
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringContaining("price_set.presentment_money") });
  });
});

describe("Shopify adapter: SKUs and currency the sender has not configured", () => {
  it("leaves unmapped a SKU missing from the sender's SKU map, naming it", () => {
    const reading = readOrder(shopifyOrder(), { skus: new Map([["SKU-999", "00-999"]]) });
    expect(reading).toMatchObject({
      kind: "unmapped",
      key: "shopify:820982911946154508",
      reason: expect.stringContaining('"SKU-001"'),
    });
  });

  it("maps a SKU through the sender's map", () => {
    const event = paidEvent(readOrder(shopifyOrder(), { skus: new Map([["SKU-001", "00-001"]]) }));
    expect(event.order.items.map((item) => item.sku)).toEqual(["00-001"]);
  });

  it("finds a line without a SKU by its variant id in the map", () => {
    const payload = shopifyOrder({ line_items: [shopifyLineItem({ sku: "", variant_id: 39072856 })] });
    const event = paidEvent(readOrder(payload, { skus: new Map([["variant:39072856", "00-TEA"]]) }));
    expect(event.order.items.map((item) => item.sku)).toEqual(["00-TEA"]);
  });

  it("does not look up a variant id JSON.parse has rounded (past 2^53), so no other variant's article is taken", () => {
    // 642667041472713922 parses as 642667041472714000 (String of the rounded number).
    const payload = shopifyOrder({ line_items: [shopifyLineItem({ sku: null, variant_id: 642667041472713922n })] });
    const skus = new Map([
      ["variant:642667041472713922", "00-TEA"],
      ["variant:642667041472714000", "00-OTHER"],
    ]);
    expect(readOrder(payload, { skus })).toMatchObject({ kind: "unmapped" });
  });

  it("leaves unmapped a line with no SKU when there is no map", () => {
    const payload = shopifyOrder({ line_items: [shopifyLineItem({ sku: "" })] });
    expect(readOrder(payload)).toMatchObject({ kind: "unmapped", reason: expect.stringContaining("no SKU") });
  });

  it("leaves unmapped an order in a currency the sender has not configured", () => {
    const reading = readOrder(shopifyOrder(), { currency: "EUR" });
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringContaining("RUB") });
  });

  it("leaves unmapped an order whose lines and shipping do not add up to total_price, with both figures", () => {
    const reading = readOrder(shopifyOrder({ total_price: "110.01", total_price_set: moneySet("110.01", "RUB") }));
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringMatching(/110\.01.*110\.00/) });
  });

  it("leaves unmapped an order whose tax is more than its total", () => {
    const reading = readOrder(shopifyOrder({ total_tax: "120.00" }));
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringContaining("order.tax") });
  });
});

describe("Shopify adapter: an order edited before it was paid (cash on delivery, bank transfer)", () => {
  // Ordered: 2 × Tea at 50.00 and shipping 10.00, 110.00 with VAT included. Before the
  // manual payment was captured the merchant removed one Tea (Orders → Edit). Shopify
  // keeps the line's ordered `quantity` and its discounts; `current_quantity` and the
  // `current_*` totals are what is left, and what the customer paid: 50.00 + 10.00.
  const tea = shopifyLineItem({ quantity: 2, current_quantity: 1 });
  const edited = shopifyOrder({
    financial_status: "paid",
    payment_gateway_names: ["Cash on Delivery (COD)"],
    total_price: "110.00",
    total_price_set: moneySet("110.00", "RUB"),
    current_total_price: "60.00",
    current_total_price_set: moneySet("60.00", "RUB"),
    current_subtotal_price: "50.00",
    current_total_tax: "10.00",
    line_items: [tea],
  });
  const paidNow = cents(edited.current_total_price);

  it("is kept for support, not booked at the quantities and total it was placed with", () => {
    expect(paidNow).toBeLessThan(cents(edited.total_price));
    const reading = readOrder(edited);
    expect(reading).toMatchObject({ kind: "unmapped", key: "shopify:820982911946154508" });
    const reason = reading.kind === "unmapped" ? reading.reason : "";
    expect(reason).toMatch(/edited/);
    expect(reason).toContain(edited.current_total_price);
    expect(reason).toContain(edited.total_price);
  });

  it("is kept for support when only a line's current_quantity shows the edit", () => {
    // Both totals already the edited one: the line still holds the removed unit.
    const reading = readOrder({
      ...edited,
      total_price: edited.current_total_price,
      total_price_set: moneySet(edited.current_total_price, "RUB"),
    });
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringMatching(/edited/) });
    expect(reading.kind === "unmapped" && reading.reason).toContain(
      `current_quantity ${tea.current_quantity} of quantity ${tea.quantity}`,
    );
  });

  it("is kept for support when only current_total_price shows it (an API version before current_quantity)", () => {
    const { current_quantity: _dropped, ...withoutCurrent } = tea;
    const reading = readOrder({ ...edited, line_items: [withoutCurrent] });
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringMatching(/edited/) });
  });

  it("is kept for support when a line was removed entirely (current_quantity 0)", () => {
    const mug = shopifyLineItem({ id: 518995019, sku: "SKU-003", title: "Mug", quantity: 1, current_quantity: 0 });
    const reading = readOrder(shopifyOrder({ line_items: [shopifyLineItem(), mug] }));
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringContaining('"Mug"') });
  });

  it("books an unedited order whose customer paid in a currency of three decimals (KWD), the shop's money being booked", () => {
    // Presentment money is the customer's currency; a shop-money sender never books it, so its
    // three decimals must not make an order nobody edited look edited (or fail to map).
    const kwd = { amount: "11.335", currency: "KWD" };
    const payload = shopifyOrder({
      total_price_set: moneySet("110.00", "RUB", kwd),
      current_total_price_set: moneySet("110.00", "RUB", kwd),
    });
    expect(paidEvent(readOrder(payload)).order.total).toBe(payload.total_price);
  });

  it("books an order whose current figures are those it was placed with", () => {
    const payload = shopifyOrder({ current_total_price_set: moneySet("110.00", "RUB") });
    expect(payload.line_items[0]?.current_quantity).toBe(payload.line_items[0]?.quantity);
    expect(paidEvent(readOrder(payload)).order.total).toBe(payload.current_total_price);
  });
});

describe("Shopify adapter: tips", () => {
  // 2 × Tea 50.00 + shipping 10.00 (VAT included) and a tip of 5.00: 115.00 paid.
  const tip = shopifyTipLine("5.00", "RUB");
  const payload = shopifyOrder({
    total_price: "115.00",
    total_price_set: moneySet("115.00", "RUB"),
    total_tip_received: "5.00",
    line_items: [shopifyLineItem(), tip],
  });

  it("keeps an order with a tip the SKU map does not name, saying to map `tip`", () => {
    const reading = readOrder(payload, { skus: new Map([["SKU-001", "00-001"]]) });
    expect(reading).toMatchObject({ kind: "unmapped", key: "shopify:820982911946154508" });
    const reason = reading.kind === "unmapped" ? reading.reason : "";
    expect(reason).toContain(`tip of ${payload.total_tip_received}`);
    expect(reason).toContain('"tip"');
  });

  it("says the same without a SKU map, where a tip has no article either", () => {
    const reading = readOrder(payload);
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringContaining('"tip"') });
  });

  it("books the tip as the article the SKU map gives `tip`", () => {
    const event = paidEvent(
      readOrder(payload, {
        skus: new Map([
          ["SKU-001", "00-001"],
          ["tip", "00-TIP"],
        ]),
      }),
    );
    expect(event.order.items).toContainEqual({ sku: "00-TIP", name: tip.title, quantity: 1, price: tip.price });
    expect(cents(tip.price)).toBe(cents(payload.total_tip_received ?? "x"));
    expect(event.order.total).toBe(payload.total_price);
    expect(itemsAndDelivery(event)).toBe(cents(payload.total_price));
  });

  it("does not take a line without SKU and product for a tip unless Shopify marks it as one", () => {
    const { tip_payment_gateway: _g, tip_payment_method: _m, ...custom } = tip;
    const reading = readOrder(
      { ...payload, line_items: [shopifyLineItem(), custom] },
      {
        skus: new Map([
          ["SKU-001", "00-001"],
          ["tip", "00-TIP"],
        ]),
      },
    );
    expect(reading).toMatchObject({ kind: "unmapped", reason: expect.stringContaining("no SKU") });
  });
});

describe("Shopify adapter: the payment's provider", () => {
  it("names the card, not the gift card, when a gift card paid part of the order", () => {
    const payload = shopifyOrder({ payment_gateway_names: ["gift_card", "shopify_payments"] });
    expect(paidEvent(readOrder(payload)).payment.provider).toBe(payload.payment_gateway_names?.[1]);
  });

  it("names the gift card when it paid the whole order", () => {
    const payload = shopifyOrder({ payment_gateway_names: ["gift_card"] });
    expect(paidEvent(readOrder(payload)).payment.provider).toBe("gift_card");
  });
});

describe("Shopify adapter: customers and shipping lines", () => {
  it("maps a paid order whose customer data Shopify withholds (protected customer data)", () => {
    const payload = shopifyOrder({ customer: null, billing_address: null, shipping_address: null, email: null });
    const event = paidEvent(readOrder(payload));
    expect(event.order.customer).toEqual({ name: "Shopify order #1001" });
    expect(event.order.delivery).toEqual({ method: "courier", price: "10.00" });
  });

  it("takes the customer's id from its admin_graphql_api_id and a contact from the customer", () => {
    const payload = shopifyOrder({
      email: null,
      customer: {
        id: 115310627314723954n,
        admin_graphql_api_id: "gid://shopify/Customer/115310627314723954",
        email: "jon@example.com",
        first_name: "Jon",
        last_name: "Doe",
        phone: "+7 495 123-45-67",
      },
    });
    expect(paidEvent(readOrder(payload)).order.customer).toEqual({
      id: "115310627314723954",
      name: "Jon Doe",
      email: "jon@example.com",
      phone: "+7 495 123-45-67",
    });
  });

  it("leaves out a removed shipping line", () => {
    const payload = shopifyOrder({
      total_price: "100.00",
      total_price_set: moneySet("100.00", "RUB"),
      total_tax: "16.67",
      shipping_lines: [shopifyShippingLine({ is_removed: true })],
    });
    const event = paidEvent(readOrder(payload));
    expect(event.order.delivery).toBeUndefined();
    expect(event.order.total).toBe(payload.total_price);
  });
});

describe("Shopify adapter: deliveries that are not a payment", () => {
  it("ignores another topic, naming it", () => {
    const reading = readOrder(shopifyOrder(), {}, { topic: "orders/create" });
    expect(reading).toMatchObject({
      kind: "ignored",
      key: "shopify:820982911946154508",
      reason: expect.stringContaining('"orders/create"'),
    });
  });

  it("ignores another topic whose body is no order, without a key", () => {
    const reading = shopifyAdapter.read(delivery('{"shop_id":548380009}', { topic: "app/uninstalled" }), settings());
    expect(reading).toMatchObject({ kind: "ignored", key: null, reason: expect.stringContaining("app/uninstalled") });
  });

  it.each(["partially_paid", "authorized", "pending", "refunded", "voided"])(
    'ignores financial_status "%s", naming it',
    (status) => {
      const reading = readOrder(shopifyOrder({ financial_status: status }));
      expect(reading).toMatchObject({
        kind: "ignored",
        key: "shopify:820982911946154508",
        reason: expect.stringContaining(`financial_status is "${status}"`),
      });
    },
  );

  it("ignores a test order unless the sender accepts them", () => {
    const payload = shopifyOrder({ test: true });
    expect(readOrder(payload)).toMatchObject({ kind: "ignored", reason: expect.stringContaining("test") });
    expect(paidEvent(readOrder(payload, { acceptTestOrders: true })).order.total).toBe(payload.total_price);
  });

  it("ignores a cancelled order", () => {
    const reading = readOrder(shopifyOrder({ cancelled_at: "2026-03-01T11:00:00+03:00" }));
    expect(reading).toMatchObject({ kind: "ignored", reason: expect.stringContaining("cancelled_at") });
  });

  it("keeps the platform's ids on an ignored delivery", () => {
    const reading = readOrder(shopifyOrder({ financial_status: "pending" }), {}, { webhookId: "w-1" });
    expect(reading.kind === "ignored" && reading.ids).toMatchObject({ webhook_id: "w-1", order_name: "#1001" });
  });
});

describe("Shopify adapter: malformed bodies", () => {
  const read = (body: string | Buffer) => shopifyAdapter.read(delivery(body), settings());

  it.each([
    ["not JSON", "order=1001"],
    ["truncated JSON", shopifyBody(shopifyOrder()).slice(0, 40)],
    ["an empty body", ""],
    ["a JSON array", "[]"],
    ["a JSON string", '"paid"'],
    ["null", "null"],
  ])("refuses %s", (_what, body) => {
    expect(read(body)).toMatchObject({ kind: "malformed" });
  });

  it("refuses a body that is not UTF-8", () => {
    expect(read(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toMatchObject({ kind: "malformed" });
  });

  it("refuses an order with no id", () => {
    const { id: _id, admin_graphql_api_id: _gid, ...noId } = shopifyOrder();
    expect(read(shopifyBody(noId))).toMatchObject({ kind: "malformed" });
  });

  it("refuses an order whose only id JSON.parse has rounded", () => {
    const { admin_graphql_api_id: _gid, ...numericOnly } = shopifyOrder();
    expect(read(shopifyBody(numericOnly))).toMatchObject({ kind: "malformed", detail: expect.stringContaining("id") });
  });

  it("keys by the numeric id when it is a safe integer and there is no admin_graphql_api_id", () => {
    const { admin_graphql_api_id: _gid, ...numericOnly } = shopifyOrder({ id: 450789469 });
    expect(paidEvent(read(shopifyBody(numericOnly))).event_id).toBe("shopify:450789469");
  });

  it('reads the test vector body {"id":1} as an order with no financial_status: keyed, and ignored', () => {
    expect(read(SHOPIFY_TEST_VECTOR.body)).toMatchObject({ kind: "ignored", key: "shopify:1" });
  });
});
