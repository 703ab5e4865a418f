import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyLineItem,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import { rng, shuffled, testSeed, withSeed } from "../support/random.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Shopify's orders/paid webhook end to end: real HTTP on 127.0.0.1, the
 * gateway on its own SQLite file, the 1C emulator. Payloads and signatures
 * come from test/support/platforms/shopify.ts (Shopify's documented fields,
 * HMAC computed with node:crypto); expected money from the payload itself.
 */
const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-a", platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP },
]);

const h = gatewayWithEmulator({
  SOURCES_FILE: sourcesFile,
  ADMIN_TOKEN: "admin-token-0123456789abcdef",
  RATE_LIMIT_MAX: "100000",
});
const admin = { authorization: "Bearer admin-token-0123456789abcdef" };

const URL_PATH = "/integration/v1/webhooks/shopify/shop-a";
let nextOrder = 900000000000000000n;

/** A paid order of its own: a new Shopify order id, so tests never share an order. */
function newOrder(overrides: Parameters<typeof shopifyOrder>[0] = {}) {
  nextOrder += 1n;
  return shopifyOrder({ id: nextOrder, admin_graphql_api_id: `gid://shopify/Order/${nextOrder}`, ...overrides });
}

function deliver(body: string, headers: Record<string, string> = shopifyHeaders(body)) {
  return call(`${h.gw.url}${URL_PATH}`, { method: "POST", body, headers });
}

/**
 * Waits until the emulator holds `expected` orders under the event's key (1C's Idempotency-Key is the sender
 * and the event id), failing after 4 s (under the test's own 5 s); returns them.
 */
async function onecOrdersFor(orderId: bigint, expected: number) {
  const matching = () => h.onec.orders().filter((order) => order.key.endsWith(`shopify:${orderId}`));
  await vi.waitFor(
    () => expect(matching().length, `1C orders of shopify:${orderId}`).toBeGreaterThanOrEqual(expected),
    {
      timeout: 4000,
      interval: 10,
    },
  );
  return matching();
}

beforeEach(() => {
  h.onec.setFaults({ latencyMs: 0 });
});

describe("Shopify orders/paid, end to end", () => {
  it("makes one order in 1C with the lines and the money Shopify says were paid", async () => {
    const order = newOrder();
    const answer = await deliver(shopifyBody(order));
    expect([201, 202]).toContain(answer.status);
    expect(answer.json()).toMatchObject({ event_id: `shopify:${order.id}` });
    const [booked, ...more] = await onecOrdersFor(order.id as bigint, 1);
    expect(more).toEqual([]);
    // The payload's own figures: total_price, total_tax, total_shipping_price_set.
    expect(booked?.booking).toMatchObject({
      total: order.total_price,
      tax: order.total_tax,
      deliveryPrice: order.total_shipping_price_set?.shop_money.amount,
      currency: order.currency,
    });
    expect(booked?.booking?.lines).toEqual([{ sku: "SKU-001", quantity: 2, price: "50.00" }]);
  });

  it("answers Shopify's retries and 50 concurrent copies, interleaved with other orders, with one order each", async () => {
    const orders = [newOrder(), newOrder(), newOrder()];
    const copies = orders.flatMap((order) => {
      const body = shopifyBody(order);
      // One webhook id per order, the same on each of its retries, as Shopify sends them.
      const headers = shopifyHeaders(body);
      return Array.from({ length: 17 }, () => ({ body, headers }));
    });
    // A seeded order: a failure names its seed, and TEST_SEED=<seed> replays it.
    const seed = testSeed();
    await withSeed(seed, async () => {
      const storm = shuffled(copies, rng(seed)).slice(0, 50);
      const answers = await Promise.all(storm.map(({ body, headers }) => deliver(body, headers)));
      for (const answer of answers) expect([200, 201, 202]).toContain(answer.status);
      for (const order of orders) {
        await onecOrdersFor(order.id as bigint, 1);
        // Every retry after the storm is a repeat, not a second order.
        const again = await deliver(shopifyBody(order));
        expect(again.status).toBe(200);
      }
      for (const order of orders) expect(await onecOrdersFor(order.id as bigint, 1)).toHaveLength(1);
    });
  });

  // "" and "///" are labels Fastify cannot parse: it refused them with 415 before any route saw the bytes.
  it.each([
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON; charset=UTF-8",
    "text/plain",
    "",
    "///",
  ])("takes a signed delivery sent as %j: the signature is over the bytes, whatever their label", async (type) => {
    const order = newOrder();
    const body = shopifyBody(order);
    const answer = await deliver(body, { ...shopifyHeaders(body), "content-type": type });
    expect([201, 202]).toContain(answer.status);
    expect(answer.json()).toMatchObject({ event_id: `shopify:${order.id}` });
    // Support sees the label the platform sent, not the one the gateway showed its body parser.
    const kept = await h.gw.gateway.register.sources.ofEvent("shop-a", `shopify:${order.id}`);
    expect(kept?.contentType).toBe(type);
  });

  it("refuses a wrong signature with 401 and records nothing", async () => {
    const order = newOrder();
    const body = shopifyBody(order);
    for (const headers of [
      shopifyHeaders(body, { secret: "not-the-shops-secret-000" }),
      { ...shopifyHeaders(body), "x-shopify-hmac-sha256": "" },
      shopifyHeaders(`${body} `),
    ]) {
      const answer = await deliver(body, headers);
      expect(answer.status).toBe(401);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/webhook-signature" });
    }
    expect(await h.gw.gateway.register.find("shop-a", `shopify:${order.id}`)).toBeUndefined();
    expect((await h.gw.gateway.register.sources.list({ limit: 1000 })).map((d) => d.key)).not.toContain(
      `shopify:${order.id}`,
    );
  });

  it("answers a changed repeat of a paid order 200, sends 1C nothing more, and shows support the change once however often it comes", async () => {
    const order = newOrder();
    const eventId = `shopify:${order.id}`;
    expect([201, 202]).toContain((await deliver(shopifyBody(order))).status);
    await onecOrdersFor(order.id as bigint, 1);
    // The same order under a new webhook id, with another e-mail: not the order first sent to 1C.
    const changed = shopifyBody({ ...order, email: "jon.doe@example.org" });
    const headers = shopifyHeaders(changed);
    // 20 copies of it at once, then Shopify's retries, one after another.
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(changed, headers)));
    answers.push(await deliver(changed, headers), await deliver(changed, headers));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({ event_id: eventId });
    }
    expect(await onecOrdersFor(order.id as bigint, 1)).toHaveLength(1);
    const kept = (await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 })).filter(
      (delivery) => delivery.key === eventId,
    );
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ payload: changed, reason: expect.stringContaining("differs from the one first") });
  });

  it("acknowledges a payment that is not whole, and shows it to support as ignored", async () => {
    const order = newOrder({ financial_status: "partially_paid" });
    const answer = await deliver(shopifyBody(order));
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ status: "ignored", reason: expect.stringContaining("partially_paid") });
    expect(await h.gw.gateway.register.find("shop-a", `shopify:${order.id}`)).toBeUndefined();
    const seen = await call(`${h.gw.url}/integration/v1/admin/webhook-deliveries?outcome=ignored`, { headers: admin });
    expect(seen.status).toBe(200);
    expect(JSON.stringify(seen.json())).toContain(`shopify:${order.id}`);
  });

  it("keeps an order it cannot map for support, with the reason, and answers 2xx", async () => {
    const order = newOrder({
      currency: "USD",
      presentment_currency: "USD",
      line_items: [shopifyLineItem({ sku: "" })],
    });
    const answer = await deliver(shopifyBody(order));
    expect(answer.status).toBe(202);
    expect(answer.json()).toMatchObject({ status: "unmapped" });
    const kept = await h.gw.gateway.register.sources.list({ outcome: "unmapped", limit: 100 });
    expect(kept.find((d) => d.key === `shopify:${order.id}`)?.payload).toBe(shopifyBody(order));
  });

  it("answers well inside Shopify's 5 s while 1C is slow", async () => {
    h.onec.setFaults({ latencyMs: 4000 });
    const order = newOrder();
    const started = performance.now();
    const answer = await deliver(shopifyBody(order));
    const elapsed = performance.now() - started;
    expect(answer.status).toBe(202);
    // The wait is a fifth of Shopify's 5 s: with room for a slow network, never near the limit.
    expect(elapsed).toBeLessThan(2500);
    h.onec.setFaults({ latencyMs: 0 });
    expect(await onecOrdersFor(order.id as bigint, 1)).toHaveLength(1);
  });
});
