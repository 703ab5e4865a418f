import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { EmulatorOrder } from "../../src/onec-emulator/emulator.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, type HttpAnswer } from "../support/http.ts";
import { type WooOrder, wooDelivery, wooHeaders, wooOrder, wooPing } from "../support/platforms/woocommerce.ts";
import { rng, shuffled, testSeed, withSeed } from "../support/random.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * WooCommerce's order webhook end to end: real HTTP on 127.0.0.1, the
 * gateway on its own SQLite file, the 1C emulator. Payloads and signatures
 * come from test/support/platforms/woocommerce.ts (order 727 of WooCommerce's
 * REST docs, HMAC computed with node:crypto); expected money from the payload.
 */

/** The webhook's secret as pasted into WooCommerce; the fixtures' own is shorter than SOURCES_FILE allows. */
const SECRET = "wc_e2e_secret_5f1d0c9a7b3e";
/** 1C's articles for order 727's lines: the first has no SKU, so its product id is mapped. */
const SKUS = { "product:93": "WOO-SINGLE-1", Bar3: "BAR3" } as const;

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-w", platform: "woocommerce", secrets: [SECRET], skus: SKUS },
]);

// The orders are WooCommerce's documented example, paid in March 2017: a register that keeps events for a
// century still remembers that payment, so it is recorded (a shorter memory ignores it: webhook-intake.test.ts).
const h = gatewayWithEmulator({ SOURCES_FILE: sourcesFile, RATE_LIMIT_MAX: "100000", RETENTION_HOURS: "876000" });

const URL_PATH = "/integration/v1/webhooks/woocommerce/shop-w";
let nextId = 5000;

/** A paid order of its own (a new WooCommerce order id), so tests never share an order. */
function newOrder(overrides: Partial<WooOrder> = {}): WooOrder {
  nextId += 1;
  return wooOrder({ id: nextId, number: String(nextId), ...overrides });
}

/** The same order a little later: completed by the shop, payment date unchanged. */
function completed(order: WooOrder): WooOrder {
  return {
    ...order,
    status: "completed",
    date_modified: "2017-03-23T10:02:41",
    date_modified_gmt: "2017-03-23T13:02:41",
    date_completed: "2017-03-23T10:02:41",
    date_completed_gmt: "2017-03-23T13:02:41",
  };
}

/** One delivery of `order`, signed with the sender's secret and a new delivery id, as WooCommerce sends each attempt. */
function signed(order: unknown, secret = SECRET) {
  return wooDelivery(order, { secret });
}

async function deliver({ body, headers }: { body: Buffer; headers: Record<string, string> }): Promise<HttpAnswer> {
  // wooBody escapes every non-ASCII character: the text is the signed bytes.
  const answer = await call(`${h.gw.url}${URL_PATH}`, { method: "POST", body: body.toString("utf8"), headers });
  // Support finds a delivery by the id WooCommerce logs with the answer, whatever the answer.
  expect(answer.headers["x-correlation-id"]).toMatch(/^\S{8,}$/);
  return answer;
}

/** The event id of an order's payment: WooCommerce's order id and date_paid_gmt, the same on every delivery. */
function keyOf(order: WooOrder): string {
  return `woocommerce:${order.id}:${(order.date_paid_gmt ?? "").replace(/[^0-9]/g, "")}`;
}

/**
 * Waits until the emulator holds `expected` orders for this WooCommerce order (1C's Idempotency-Key ends with
 * the event id), failing after 4 s (under the test's own 5 s); returns them.
 */
async function onecOrdersFor(order: WooOrder, expected: number): Promise<EmulatorOrder[]> {
  const matching = () => h.onec.orders().filter((booked) => booked.key.includes(`woocommerce:${order.id}:`));
  await vi.waitFor(
    () => expect(matching().length, `1C orders of woocommerce:${order.id}`).toBeGreaterThanOrEqual(expected),
    { timeout: 4000, interval: 10 },
  );
  return matching();
}

/** A payload amount ("29.35", "0.9", "10") in cents, read here, not by the gateway's code. */
function cents(amount: string): number {
  const [whole = "", fraction = ""] = amount.split(".");
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"));
}

/** What each 1C article should hold: the payload lines' quantities and what was paid for them (total + total_tax). */
function expectedLines(order: WooOrder): Record<string, { quantity: number; paid: number }> {
  const lines: Record<string, { quantity: number; paid: number }> = {};
  for (const line of order.line_items) {
    const article = (SKUS as Record<string, string>)[line.sku === "" ? `product:${line.product_id}` : line.sku] ?? "?";
    const seen = lines[article] ?? { quantity: 0, paid: 0 };
    lines[article] = {
      quantity: seen.quantity + line.quantity,
      paid: seen.paid + cents(line.total) + cents(line.total_tax),
    };
  }
  return lines;
}

function bookedLines(booked: EmulatorOrder): Record<string, { quantity: number; paid: number }> {
  const lines: Record<string, { quantity: number; paid: number }> = {};
  for (const line of booked.booking?.lines ?? []) {
    const seen = lines[line.sku] ?? { quantity: 0, paid: 0 };
    lines[line.sku] = { quantity: seen.quantity + line.quantity, paid: seen.paid + line.quantity * cents(line.price) };
  }
  return lines;
}

async function keysRecorded(): Promise<string[]> {
  return (await h.gw.gateway.register.sources.list({ limit: 1000 })).map((delivery) => delivery.key);
}

beforeEach(() => {
  h.onec.setFaults({ latencyMs: 0 });
});

describe("WooCommerce order webhook, end to end", () => {
  it("makes one order in 1C with the lines and the money WooCommerce says were paid", async () => {
    // Order 727 exactly as the REST docs show it.
    const order = wooOrder();
    const answer = await deliver(signed(order));
    expect([201, 202]).toContain(answer.status);
    expect(answer.json()).toMatchObject({ event_id: keyOf(order) });
    const [booked, ...more] = await onecOrdersFor(order, 1);
    expect(more).toEqual([]);
    // The payload's own figures: total, total_tax, shipping_total + shipping_tax, currency.
    expect(booked?.booking).toMatchObject({ total: order.total, tax: order.total_tax, currency: order.currency });
    const shipping = cents(order.shipping_total) + cents(order.shipping_tax);
    expect(cents(booked?.booking?.deliveryPrice ?? "")).toBe(shipping);
    expect(bookedLines(booked as EmulatorOrder)).toEqual(expectedLines(order));
    const lines = booked?.booking?.lines ?? [];
    const sum = lines.reduce((total, line) => total + line.quantity * cents(line.price), 0);
    expect(sum + shipping).toBe(cents(order.total));
  });

  it("answers a storm of 50 deliveries (new delivery ids, processing then completed, other orders among them) with one order each", async () => {
    const first = newOrder();
    const others = Array.from({ length: 6 }, () => newOrder());
    // WooCommerce never retries, but it sends a delivery per update: the same payment as processing, then completed.
    const copies = [
      ...Array.from({ length: 4 }, () => signed(first)),
      ...Array.from({ length: 4 }, () => signed(completed(first))),
      ...others.flatMap((order) =>
        Array.from({ length: 7 }, (_, index) => signed(index % 2 === 0 ? order : completed(order))),
      ),
    ];
    expect(copies).toHaveLength(50);
    expect(new Set(copies.map(({ headers }) => headers["x-wc-webhook-delivery-id"])).size).toBe(50);
    // A seeded order: a failure names its seed, and TEST_SEED=<seed> replays it.
    const seed = testSeed();
    await withSeed(seed, async () => {
      const answers = await Promise.all(shuffled(copies, rng(seed)).map(deliver));
      for (const answer of answers) expect([200, 201, 202]).toContain(answer.status);
      for (const order of [first, ...others]) {
        await onecOrdersFor(order, 1);
        // A later update of the paid order is a repeat, not a second order.
        const again = await deliver(signed(completed(order)));
        expect(again.status).toBe(200);
        expect(again.json()).toMatchObject({ event_id: keyOf(order) });
      }
      for (const order of [first, ...others]) expect(await onecOrdersFor(order, 1)).toHaveLength(1);
      // Completing a paid order changes nothing that was paid: no copy is kept as "a different order".
      const ignored = await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 });
      const keys = new Set([first, ...others].map(keyOf));
      expect(ignored.filter((delivery) => keys.has(delivery.key))).toEqual([]);
    });
  });

  it("refuses a wrong or missing signature with 401 and records nothing", async () => {
    const order = newOrder();
    const { body, headers } = signed(order);
    const { "x-wc-webhook-signature": _dropped, ...unsigned } = headers;
    for (const refused of [
      signed(order, "not-the-webhooks-secret-0000"),
      { body, headers: unsigned },
      // A signature over other bytes: the body as WooCommerce signed it, with a space added on the way.
      { body: Buffer.concat([body, Buffer.from(" ")]), headers },
    ]) {
      const answer = await deliver(refused);
      expect(answer.status).toBe(401);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/webhook-signature" });
    }
    expect(await h.gw.gateway.register.find("shop-w", keyOf(order))).toBeUndefined();
    expect((await keysRecorded()).filter((key) => key.startsWith(`woocommerce:${order.id}`))).toEqual([]);
  });

  it.each([
    ["pending", { status: "pending", date_paid: null, date_paid_gmt: null, payment_method: "stripe" }],
    ["on-hold", { status: "on-hold", date_paid: null, date_paid_gmt: null }],
  ] as const)(
    "acknowledges an update to %s, sends nothing to 1C, and shows it to support as ignored",
    async (status, fields) => {
      const order = newOrder(fields);
      const answer = await deliver(signed(order));
      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({ status: "ignored", reason: expect.stringContaining(status) });
      const ignored = await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 });
      const seen = ignored.find((delivery) => delivery.correlationId === answer.headers["x-correlation-id"]);
      expect(seen).toMatchObject({ sender: "shop-w", platform: "woocommerce", key: `woocommerce:${order.id}` });
      expect(seen?.reason).toContain(status);
      expect(seen?.payload).toBe(signed(order).body.toString("utf8"));
      // The order's payment, when it comes, is its only order in 1C: the update before it sent nothing.
      const paid = {
        ...order,
        status: "processing",
        date_paid: "2017-03-22T16:28:08",
        date_paid_gmt: "2017-03-22T19:28:08",
      };
      expect((await deliver(signed(paid))).status).toBeLessThan(300);
      expect(await onecOrdersFor(paid, 1)).toHaveLength(1);
      expect(h.onec.orders().filter((booked) => booked.key.includes(`woocommerce:${order.id}`))).toHaveLength(1);
    },
  );

  it.each([
    ["without a Content-Type", {}],
    ["as a form", { "content-type": "application/x-www-form-urlencoded" }],
    ["under a Content-Type that does not parse", { "content-type": "form" }],
  ])("answers WooCommerce's unsigned creation ping %s with exactly 200 and records nothing", async (_, type) => {
    const before = await keysRecorded();
    const ping = wooPing(142);
    const answer = await deliver({ body: ping.body, headers: { ...ping.headers, ...type } });
    expect(answer.status).toBe(200);
    expect(await keysRecorded()).toEqual(before);
  });

  it.each([
    ["bytes that are not JSON", Buffer.from('{"id":727,"status":"processing"', "utf8")],
    ["JSON that is not an order object", Buffer.from("[727]", "utf8")],
  ])("refuses signed %s with 400 and records nothing", async (_, body) => {
    const before = await keysRecorded();
    const answer = await deliver({ body, headers: wooHeaders(body, { secret: SECRET }) });
    expect(answer.status).toBe(400);
    expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/webhook-malformed" });
    expect(await keysRecorded()).toEqual(before);
  });

  it("answers within the same bound as Shopify's while 1C is slow", async () => {
    h.onec.setFaults({ latencyMs: 4000 });
    const order = newOrder();
    const started = performance.now();
    const answer = await deliver(signed(order));
    const elapsed = performance.now() - started;
    expect(answer.status).toBe(202);
    // WooCommerce waits 60 s, but the gateway waits for 1C at most SYNC_WAIT_MS (2 s by default).
    expect(elapsed).toBeLessThan(2500);
    h.onec.setFaults({ latencyMs: 0 });
    expect(await onecOrdersFor(order, 1)).toHaveLength(1);
  });

  it("never writes the webhook's secret to the log", async () => {
    const order = newOrder();
    expect((await deliver(signed(order))).status).toBeLessThan(300);
    expect((await deliver(signed(order, `${SECRET}x`))).status).toBe(401);
    await onecOrdersFor(order, 1);
    const lines = h.gw.logs.filter((line) => String(line.url).startsWith(URL_PATH));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(h.gw.logs)).not.toContain(SECRET);
  });
});
