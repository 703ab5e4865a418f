import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, type HttpAnswer } from "../support/http.ts";
import { OPERATOR, type TestOperator, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyLineItem,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import { cloudpaymentsPayment, formHeaders, jsonStringForm, tildaWebhookPath } from "../support/platforms/tilda.ts";
import { wooBody, wooHeaders, wooOrder } from "../support/platforms/woocommerce.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Support's view of the platforms' deliveries over the admin API (issue 24:
 * "a paid order whose mapping fails is recorded and shown to support with
 * the reason, and is not lost"): real signed deliveries into a real gateway
 * on 127.0.0.1, read back and mapped again with the roles of the admin API.
 */
const DELIVERIES = "/integration/v1/admin/webhook-deliveries";
const PROBLEM_JSON = /^application\/problem\+json\b/;
/** A WooCommerce webhook secret long enough for SOURCES_FILE (16 characters at least). */
const WOO_SECRET = "wc_secret_for_admin_tests";

const dir = tempDir("admin-deliveries-");
afterAll(() => dir.remove());
const OPERATORS_FILE = writeOperatorsFile(dir.path, [VIEWER, OPERATOR]);

/** The shop's settings as first configured: its SKU map lacks TEA-OOLONG. */
const SHOP_A = { sender: "shop-a", platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP };
const sourcesFile = (name: string, sources: unknown[]) => {
  const path = join(dir.path, name);
  writeFileSync(path, JSON.stringify({ sources }));
  return path;
};
const FIRST_SOURCES = sourcesFile("sources-first.json", [
  { ...SHOP_A, skus: { "SKU-001": "TEA-001" } },
  { sender: "shop-w", platform: "woocommerce", secrets: [WOO_SECRET] },
  {
    sender: "shop-t",
    platform: "tilda",
    secrets: ["tilda-url-token-3f9a1c7e5b2d"],
    currency: "RUB",
    skus: { "MUG-ENM-350": "MUG-350" },
  },
]);
/** Support fixed the SKU map; Tilda is no longer configured for shop-t. */
const FIXED_SOURCES = sourcesFile("sources-fixed.json", [
  { ...SHOP_A, skus: { "SKU-001": "TEA-001", "TEA-OOLONG": "TEA-002" } },
  { sender: "shop-w", platform: "woocommerce", secrets: [WOO_SECRET] },
]);

const h = gatewayWithEmulator({
  SOURCES_FILE: FIRST_SOURCES,
  OPERATORS_FILE,
  RATE_LIMIT_MAX: "100000",
  DELIVERY_POLL_MS: "50",
});

const bearer = (who: TestOperator) => ({ authorization: `Bearer ${who.token}` });

let nextOrder = 910000000000000000n;
function newShopifyOrder(overrides: Parameters<typeof shopifyOrder>[0] = {}) {
  nextOrder += 1n;
  return shopifyOrder({ id: nextOrder, admin_graphql_api_id: `gid://shopify/Order/${nextOrder}`, ...overrides });
}

/** Sends a Shopify delivery; returns the headers it went with (its webhook id among them). */
async function sendShopify(order: ReturnType<typeof shopifyOrder>, url = h.gw.url) {
  const body = shopifyBody(order);
  const headers = shopifyHeaders(body);
  const answer = await call(`${url}/integration/v1/webhooks/shopify/shop-a`, { method: "POST", body, headers });
  return { answer, body, headers };
}

/** An order Shopify says was paid, with a line whose SKU the first settings do not map. */
async function unmappedShopifyOrder() {
  const order = newShopifyOrder({ line_items: [shopifyLineItem({ sku: "TEA-OOLONG" })] });
  const sent = await sendShopify(order);
  expect(sent.answer.status).toBe(202);
  expect(sent.answer.json()).toMatchObject({ status: "unmapped" });
  return { order, ...sent, deliveryId: sent.answer.json().delivery_id as number };
}

function get(path: string, who: TestOperator | undefined, url = h.gw.url): Promise<HttpAnswer> {
  return call(`${url}${DELIVERIES}${path}`, { headers: who === undefined ? {} : bearer(who) });
}

function remap(id: number | string, who: TestOperator | undefined, body: unknown, url = h.gw.url): Promise<HttpAnswer> {
  return call(`${url}${DELIVERIES}/${id}/remap`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...(who === undefined ? {} : bearer(who)) },
  });
}

interface ListedDelivery {
  id: number;
  sender: string;
  platform: string;
  key: string;
  outcome: string;
  reason: string | null;
  event_id: string | null;
  ids: Record<string, string>;
  received_at: string;
  remapped_at: string | null;
}

async function listed(query: string, who: TestOperator = VIEWER): Promise<ListedDelivery[]> {
  const answer = await get(query, who);
  expect(answer.status).toBe(200);
  return answer.json().deliveries as ListedDelivery[];
}

function expectProblem(answer: HttpAnswer, status: number, slug: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toMatch(PROBLEM_JSON);
  expect(answer.json()).toMatchObject({ type: `/integration/v1/problems/${slug}`, status });
}

/** The emulator's orders booked under this Shopify order's event key. */
async function onecOrdersFor(orderId: bigint, expected: number) {
  const matching = () => h.onec.orders().filter((order) => order.key.endsWith(`shopify:${orderId}`));
  const deadline = Date.now() + 10_000;
  while (matching().length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return matching();
}

describe("the list", () => {
  it("shows each kept delivery newest first, with the platform's ids and without its payload or stored headers", async () => {
    const ignored = await sendShopify(newShopifyOrder({ financial_status: "partially_paid" }));
    expect(ignored.answer.status).toBe(200);
    const unmapped = await unmappedShopifyOrder();
    const acceptedOrder = newShopifyOrder();
    const accepted = await sendShopify(acceptedOrder);
    expect([201, 202]).toContain(accepted.answer.status);

    const answer = await get("?sender=shop-a", VIEWER);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    const deliveries = answer.json().deliveries as ListedDelivery[];
    const ids = deliveries.map((d) => d.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const times = deliveries.map((d) => Date.parse(d.received_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const [newest, second, third] = deliveries;
    const acceptedKey = `shopify:${acceptedOrder.id}`;
    expect(newest).toMatchObject({
      sender: "shop-a",
      platform: "shopify",
      key: acceptedKey,
      outcome: "accepted",
      reason: null,
      event_id: acceptedKey,
      remapped_at: null,
      remapped_by: null,
      remap_reason: null,
    });
    expect(second).toMatchObject({
      id: unmapped.deliveryId,
      key: `shopify:${unmapped.order.id}`,
      outcome: "unmapped",
      reason: expect.stringContaining("TEA-OOLONG"),
      event_id: null,
    });
    expect(third).toMatchObject({ outcome: "ignored", reason: expect.stringContaining("partially_paid") });
    // The ids Shopify sent in its headers, by the names the issue gives them.
    expect(second?.ids).toMatchObject({
      webhook_id: unmapped.headers["x-shopify-webhook-id"],
      event_id: unmapped.headers["x-shopify-event-id"],
      topic: "orders/paid",
      shop_domain: SHOPIFY_SHOP,
    });
    for (const delivery of deliveries) {
      expect(delivery).not.toHaveProperty("payload");
      expect(delivery.ids).not.toHaveProperty("headers");
      expect(Object.keys(delivery.ids).some((name) => name.startsWith("x-"))).toBe(false);
    }
    expect(answer.text).not.toContain("x-shopify-hmac-sha256");
  });

  it("filters by outcome, sender and platform", async () => {
    await unmappedShopifyOrder();
    const order = wooOrder({ id: 5501, status: "pending", date_paid: null, date_paid_gmt: null });
    const body = wooBody(order);
    const woo = await call(`${h.gw.url}/integration/v1/webhooks/woocommerce/shop-w`, {
      method: "POST",
      body: body.toString("utf8"),
      headers: wooHeaders(body, { secret: WOO_SECRET }),
    });
    expect(woo.status).toBe(200);

    const ignored = await listed("?outcome=ignored");
    expect(ignored.length).toBeGreaterThan(0);
    expect(new Set(ignored.map((d) => d.outcome))).toEqual(new Set(["ignored"]));
    const unmapped = await listed("?outcome=unmapped&sender=shop-a");
    expect(unmapped.length).toBeGreaterThan(0);
    for (const d of unmapped) expect(d).toMatchObject({ outcome: "unmapped", sender: "shop-a" });
    const ofWoo = await listed("?platform=woocommerce");
    expect(ofWoo.map((d) => d.key)).toContain("woocommerce:5501");
    expect(new Set(ofWoo.map((d) => d.platform))).toEqual(new Set(["woocommerce"]));
    expect(await listed("?sender=nobody-sends-this")).toEqual([]);
  });

  it("pages by before_id until next_before_id is null", async () => {
    for (let i = 0; i < 3; i += 1) await sendShopify(newShopifyOrder({ financial_status: "pending" }));
    const all = await listed("?sender=shop-a&outcome=ignored&limit=500");
    const seen: number[] = [];
    let query = "?sender=shop-a&outcome=ignored&limit=2";
    for (let pages = 0; pages < 100; pages += 1) {
      const page = (await get(query, VIEWER)).json();
      const deliveries = page.deliveries as ListedDelivery[];
      expect(deliveries.length).toBeLessThanOrEqual(2);
      seen.push(...deliveries.map((d) => d.id));
      if (page.next_before_id === null) break;
      expect(page.next_before_id).toBe(deliveries.at(-1)?.id);
      query = `?sender=shop-a&outcome=ignored&limit=2&before_id=${page.next_before_id}`;
    }
    expect(seen).toEqual(all.map((d) => d.id));
    expect(seen.length).toBeGreaterThanOrEqual(3);
  });

  it("refuses a malformed filter with 400", async () => {
    for (const query of ["?outcome=lost", "?before_id=abc", "?limit=0", "?platform=magento", "?colour=red"]) {
      expectProblem(await get(query, VIEWER), 400, "bad-request");
    }
  });
});

describe("one delivery", () => {
  it("has its payload as received for an operator, and masked for a viewer, with Shopify's ids digit for digit", async () => {
    const { deliveryId, body, order } = await unmappedShopifyOrder();
    const forOperator = await get(`/${deliveryId}`, OPERATOR);
    expect(forOperator.status).toBe(200);
    expect(forOperator.json()).toMatchObject({
      id: deliveryId,
      sender: "shop-a",
      platform: "shopify",
      outcome: "unmapped",
      content_type: "application/json",
      payload: body,
      payload_masked: false,
    });

    const forViewer = (await get(`/${deliveryId}`, VIEWER)).json();
    expect(forViewer.payload_masked).toBe(true);
    const masked = String(forViewer.payload);
    expect(masked).not.toContain(String(order.email));
    expect(masked).toContain("@example.com");
    // 910000000000000xxx is past 2^53: a reader that went through a double would change it.
    expect(masked).toContain(`"id": ${order.id}`);
    expect(masked).toContain(`"total_price": "${order.total_price}"`);
  });

  it("masks a Tilda form's e-mail and phone for a viewer", async () => {
    const body = jsonStringForm(cloudpaymentsPayment());
    const sent = await call(`${h.gw.url}${tildaWebhookPath("shop-t")}`, {
      method: "POST",
      body,
      headers: formHeaders(),
    });
    expect(sent.status).toBe(200);
    const [delivery] = await listed("?sender=shop-t&limit=1");
    expect(delivery).toMatchObject({ platform: "tilda", outcome: "unmapped", key: "tilda:1869817991" });
    const forOperator = (await get(`/${delivery?.id}`, OPERATOR)).json();
    expect(forOperator.payload).toBe(body);
    const forViewer = new URLSearchParams(String((await get(`/${delivery?.id}`, VIEWER)).json().payload));
    expect(forViewer.get("Email")).not.toContain("ivan.petrov");
    expect(forViewer.get("Phone")).not.toContain("123-45");
    expect(forViewer.get("Phone")).toMatch(/67$/);
    expect(JSON.parse(forViewer.get("payment") ?? "null")).toEqual(cloudpaymentsPayment());
  });

  it("is 404 when there is no such delivery", async () => {
    expectProblem(await get("/987654321", VIEWER), 404, "not-found");
    expectProblem(await get("/not-a-number", VIEWER), 404, "not-found");
  });
});

describe("who may", () => {
  it("no token: 401 on every route", async () => {
    expectProblem(await get("", undefined), 401, "unauthorized");
    expectProblem(await get("/1", undefined), 401, "unauthorized");
    expectProblem(await remap(1, undefined, { reason: "x" }), 401, "unauthorized");
  });

  it("a viewer reads but may not map again: 403, and the delivery stays unmapped", async () => {
    const { deliveryId } = await unmappedShopifyOrder();
    expect((await get(`/${deliveryId}`, VIEWER)).status).toBe(200);
    const answer = await remap(deliveryId, VIEWER, { reason: "let me try" });
    expectProblem(answer, 403, "forbidden");
    expect((await get(`/${deliveryId}`, OPERATOR)).json()).toMatchObject({ outcome: "unmapped", remapped_at: null });
  });

  it("a remap needs a reason", async () => {
    const { deliveryId } = await unmappedShopifyOrder();
    expectProblem(await remap(deliveryId, OPERATOR, {}), 400, "bad-request");
    expectProblem(await remap(deliveryId, OPERATOR, { reason: "" }), 400, "bad-request");
    expectProblem(await remap(deliveryId, OPERATOR, { reason: "  \t " }), 400, "bad-request");
  });
});

describe("mapping again", () => {
  it("with the settings unchanged: 422 still-unmapped with the reason, and nothing recorded", async () => {
    const { deliveryId, order } = await unmappedShopifyOrder();
    const answer = await remap(deliveryId, OPERATOR, { reason: "trying before the fix" });
    expectProblem(answer, 422, "still-unmapped");
    expect(String(answer.json().detail)).toContain('unknown SKU "TEA-OOLONG"');
    expect(await h.gw.gateway.register.find("shop-a", `shopify:${order.id}`)).toBeUndefined();
    expect((await get(`/${deliveryId}`, OPERATOR)).json()).toMatchObject({ remapped_at: null, event_id: null });
  });

  it("refuses what is not unmapped: 409 remap-refused", async () => {
    const ignored = await sendShopify(newShopifyOrder({ financial_status: "pending" }));
    const answer = await remap(Number(ignored.answer.json().delivery_id), OPERATOR, { reason: "no" });
    expectProblem(answer, 409, "remap-refused");
    expectProblem(await remap(987654321, OPERATOR, { reason: "no" }), 404, "not-found");
  });

  describe("after the settings are fixed (a gateway on the same database with the fixed SOURCES_FILE)", () => {
    let fixed: TestGateway | undefined;
    afterAll(async () => {
      await fixed?.close();
    });
    const started = async () => {
      fixed ??= await startTestGateway({
        ONEC_URL: h.onec.url,
        SOURCES_FILE: FIXED_SOURCES,
        OPERATORS_FILE,
        DATABASE_URL: h.gw.databasePath,
        DELIVERY_POLL_MS: "50",
      });
      return fixed;
    };

    it("maps it: 202 with the event, one order in 1C with the article from the new map; a second remap is 409", async () => {
      const { deliveryId, order } = await unmappedShopifyOrder();
      const gw = await started();
      const answer = await remap(deliveryId, OPERATOR, { reason: "TEA-OOLONG mapped to TEA-002" }, gw.url);
      expect(answer.status).toBe(202);
      const eventId = `shopify:${order.id}`;
      expect(answer.json()).toMatchObject({
        delivery_id: deliveryId,
        sender: "shop-a",
        event_id: eventId,
        status_url: `/integration/v1/orders/paid/${encodeURIComponent(eventId)}`,
      });
      expect(answer.headers.location).toBe(answer.json().status_url);

      const [booked, ...more] = await onecOrdersFor(order.id as bigint, 1);
      expect(more).toEqual([]);
      expect(booked?.booking).toMatchObject({ total: order.total_price, currency: order.currency });
      expect(booked?.booking?.lines).toEqual([{ sku: "TEA-002", quantity: 2, price: "50.00" }]);

      const after = (await get(`/${deliveryId}`, OPERATOR, gw.url)).json();
      expect(after).toMatchObject({
        outcome: "unmapped",
        event_id: eventId,
        remapped_at: expect.any(String),
        // Who and why, as the token's owner and the request said: a remap sends an order, as a replay does.
        remapped_by: OPERATOR.name,
        remap_reason: "TEA-OOLONG mapped to TEA-002",
      });

      const again = await remap(deliveryId, OPERATOR, { reason: "once more" }, gw.url);
      expectProblem(again, 409, "remap-refused");
      expect(again.json().event_id).toBe(eventId);
      expect(await onecOrdersFor(order.id as bigint, 1)).toHaveLength(1);

      // The audit: who asked and why, on the request's own line and on the remap's.
      const correlationId = answer.headers["x-correlation-id"];
      const lines = gw.logs.filter((line) => line.correlation_id === correlationId);
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: "request completed", operator: OPERATOR.name, event_id: eventId }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: "delivery remapped",
          requested_by: OPERATOR.name,
          reason: "TEA-OOLONG mapped to TEA-002",
          delivery_id: deliveryId,
        }),
      );
    });

    it("refuses a delivery whose platform is no longer configured for its sender: 409", async () => {
      const [tilda] = await listed("?sender=shop-t&outcome=unmapped&limit=1");
      expect(tilda).toBeDefined();
      const gw = await started();
      const answer = await remap(Number(tilda?.id), OPERATOR, { reason: "Tilda dropped" }, gw.url);
      expectProblem(answer, 409, "remap-refused");
      expect(String(answer.json().detail)).toContain("shop-t");
    });
  });
});
