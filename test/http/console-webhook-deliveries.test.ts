import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { consoleCall, hiddenField, signInAs } from "../support/console-client.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { OPERATOR, type TestOperator, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyLineItem,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The console's platform deliveries over real HTTP, without a browser: the
 * list, one delivery with its payload (hostile input, escaped), the event
 * page's platform section, and "Map again" with its CSRF token and roles.
 */
const dir = tempDir("console-deliveries-");
afterAll(() => dir.remove());
const OPERATORS_FILE = writeOperatorsFile(dir.path, [VIEWER, OPERATOR]);
const SHOP_A = { sender: "shop-a", platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP };
function sourcesFile(name: string, skus: Record<string, string>): string {
  const path = join(dir.path, name);
  writeFileSync(path, JSON.stringify({ sources: [{ ...SHOP_A, skus }] }));
  return path;
}
const FIRST_SOURCES = sourcesFile("sources-first.json", { "SKU-001": "TEA-001" });
const FIXED_SOURCES = sourcesFile("sources-fixed.json", { "SKU-001": "TEA-001", "TEA-OOLONG": "TEA-002" });

const h = gatewayWithEmulator({
  SOURCES_FILE: FIRST_SOURCES,
  OPERATORS_FILE,
  RATE_LIMIT_MAX: "100000",
  DELIVERY_POLL_MS: "50",
});

let nextOrder = 920000000000000000n;
function newOrder(overrides: Parameters<typeof shopifyOrder>[0] = {}) {
  nextOrder += 1n;
  return shopifyOrder({ id: nextOrder, admin_graphql_api_id: `gid://shopify/Order/${nextOrder}`, ...overrides });
}

async function send(order: ReturnType<typeof shopifyOrder>) {
  const body = shopifyBody(order);
  const headers = shopifyHeaders(body);
  const answer = await call(`${h.gw.url}/integration/v1/webhooks/shopify/shop-a`, { method: "POST", body, headers });
  expect(answer.status).toBeLessThan(300);
  return { headers, deliveryId: answer.json().delivery_id as number | undefined };
}

/** A paid order with a SKU the first settings do not map: kept as unmapped. */
async function unmappedOrder(title = "Oolong") {
  const order = newOrder({ line_items: [shopifyLineItem({ sku: "TEA-OOLONG", title })] });
  const { deliveryId, headers } = await send(order);
  if (deliveryId === undefined) throw new Error("the delivery was not kept as unmapped");
  return { order, deliveryId, headers };
}

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(who: TestOperator, url = h.gw.url): Promise<Session> {
  const { cookie } = await signInAs(url, who.token);
  const home = await consoleCall(`${url}/console`, { headers: { cookie } });
  return { cookie, csrf: hiddenField(home.text, "csrf") };
}

function open(path: string, session: Session, url = h.gw.url) {
  return consoleCall(`${url}${path}`, { headers: { cookie: session.cookie } });
}

function post(path: string, session: Session, form: Record<string, string>, url = h.gw.url) {
  return consoleCall(`${url}${path}`, { form, headers: { cookie: session.cookie } });
}

const deliveryPath = (id: number) => `/console/webhook-deliveries/${id}`;
const eventPath = (eventId: string) => `/console/events/shop-a/${encodeURIComponent(eventId)}`;

/** The rows of the deliveries table, as text without tags. */
function rowsOf(page: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(page)?.[1] ?? "";
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => (row[1] ?? "").replace(/<[^>]*>/g, " "));
}

async function onecOrdersFor(orderId: bigint, expected: number) {
  const matching = () => h.onec.orders().filter((order) => order.key.endsWith(`shopify:${orderId}`));
  const deadline = Date.now() + 10_000;
  while (matching().length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return matching();
}

describe("the platform deliveries page", () => {
  it("is linked from every page and lists deliveries newest first, each with its outcome, reason and event", async () => {
    const ignored = newOrder({ financial_status: "partially_paid" });
    await send(ignored);
    const unmapped = await unmappedOrder();
    const accepted = newOrder();
    await send(accepted);

    const session = await signIn(VIEWER);
    const home = await open("/console", session);
    expect(home.text).toContain('<a href="/console/webhook-deliveries">Platform deliveries</a>');

    const list = await open("/console/webhook-deliveries?sender=shop-a", session);
    expect(list.status).toBe(200);
    const rows = rowsOf(list.text);
    const at = (id: bigint | number) => rows.findIndex((row) => row.includes(`shopify:${id}`));
    expect(at(accepted.id)).toBeGreaterThanOrEqual(0);
    expect(at(accepted.id)).toBeLessThan(at(unmapped.order.id));
    expect(at(unmapped.order.id)).toBeLessThan(at(ignored.id));
    expect(rows[at(unmapped.order.id)]).toMatch(/shop-a[\s\S]*shopify[\s\S]*unmapped[\s\S]*unknown SKU/);
    expect(rows[at(ignored.id)]).toContain("partially_paid");
    expect(list.text).toContain(`href="${eventPath(`shopify:${accepted.id}`)}"`);
    expect(list.text).toContain(`href="${deliveryPath(unmapped.deliveryId)}"`);
  });

  it("filters by outcome and sender", async () => {
    const ignored = newOrder({ financial_status: "pending" });
    await send(ignored);
    const { order } = await unmappedOrder();
    const session = await signIn(VIEWER);
    const onlyUnmapped = await open("/console/webhook-deliveries?outcome=unmapped", session);
    expect(onlyUnmapped.text).toContain(`shopify:${order.id}`);
    expect(onlyUnmapped.text).not.toContain(`shopify:${ignored.id}`);
    expect(onlyUnmapped.text).toContain('href="/console/webhook-deliveries?outcome=unmapped" aria-current="page"');
    const onlyIgnored = await open("/console/webhook-deliveries?outcome=ignored&sender=shop-a", session);
    expect(onlyIgnored.text).toContain(`shopify:${ignored.id}`);
    expect(onlyIgnored.text).not.toContain(`shopify:${order.id}`);
    const otherSender = await open("/console/webhook-deliveries?sender=shop-z", session);
    expect(otherSender.text).toContain("No deliveries match.");
    expect((await open("/console/webhook-deliveries?outcome=lost", session)).status).toBe(400);
  });

  it("pages by id: 50 a page, and the Older link leads to the rest", async () => {
    const sent: bigint[] = [];
    for (let i = 0; i < 52; i += 1) {
      const order = newOrder({ financial_status: "voided" });
      await send(order);
      sent.push(order.id as bigint);
    }
    const session = await signIn(VIEWER);
    const first = await open("/console/webhook-deliveries?outcome=ignored&sender=shop-a", session);
    expect(rowsOf(first.text)).toHaveLength(50);
    const older = /<a rel="next" href="([^"]+)">Older<\/a>/.exec(first.text)?.[1]?.replaceAll("&amp;", "&");
    expect(older).toMatch(/^\/console\/webhook-deliveries\?outcome=ignored&sender=shop-a&before=\d+$/);
    const second = await open(older ?? "", session);
    const shown = `${first.text}${second.text}`;
    // The 52 newest ignored deliveries are these, newest first across both pages.
    for (const id of sent) expect(shown).toContain(`shopify:${id}`);
    expect(rowsOf(first.text)[0]).toContain(`shopify:${sent.at(-1)}`);
    expect(rowsOf(second.text).some((row) => row.includes(`shopify:${sent[0]}`))).toBe(true);
  });
});

describe("one delivery", () => {
  it("shows its facts, the platform's ids and the payload as received, escaped", async () => {
    const hostile = '<script>alert("x1")</script>';
    const { deliveryId, headers } = await unmappedOrder(hostile);
    const session = await signIn(OPERATOR);
    const shown = await open(deliveryPath(deliveryId), session);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(headers["x-shopify-webhook-id"]);
    expect(shown.text).toContain(SHOPIFY_SHOP);
    expect(shown.text).toContain("unknown SKU");
    expect(shown.text).not.toContain(hostile);
    expect(shown.text).toContain("&lt;script&gt;alert(\\&quot;x1\\&quot;)&lt;/script&gt;");
    expect(shown.text).toMatch(/<pre class="body">[^<]*&lt;script&gt;/);
    expect(shown.text).toContain("jon@example.com");
  });

  it("masks the customer's e-mail for a viewer, and offers no Map again", async () => {
    const { deliveryId } = await unmappedOrder();
    const session = await signIn(VIEWER);
    const shown = await open(deliveryPath(deliveryId), session);
    expect(shown.text).not.toContain("jon@example.com");
    expect(shown.text).not.toContain("Map again</button>");
    const refused = await post(`${deliveryPath(deliveryId)}/remap`, session, { csrf: session.csrf, reason: "x" });
    expect(refused.status).toBe(403);
  });

  it("is 404 when there is no such delivery", async () => {
    const session = await signIn(VIEWER);
    expect((await open(deliveryPath(987654321), session)).status).toBe(404);
    expect((await open("/console/webhook-deliveries/abc", session)).status).toBe(404);
  });
});

describe("the event page of a platform's order", () => {
  it("has a Platform section: the platform, its ids, when it came, and a link to the delivery", async () => {
    const order = newOrder();
    const { headers } = await send(order);
    const eventId = `shopify:${order.id}`;
    const session = await signIn(VIEWER);
    const shown = await open(eventPath(eventId), session);
    expect(shown.status).toBe(200);
    const section = /<section aria-labelledby="platform-heading">([\s\S]*?)<\/section>/.exec(shown.text)?.[1] ?? "";
    expect(section).toContain("<dd>shopify</dd>");
    expect(section).toContain(headers["x-shopify-webhook-id"]);
    expect(section).toContain(SHOPIFY_SHOP);
    expect(section).toContain("orders/paid");
    const [delivery] = await h.gw.gateway.register.sources.list({ sender: "shop-a", outcome: "accepted", limit: 1 });
    expect(delivery?.key).toBe(eventId);
    expect(section).toContain(`href="${deliveryPath(delivery?.id ?? 0)}"`);
  });

  it("has none for a sender's own event", async () => {
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event)).status).toBe(201);
    const session = await signIn(VIEWER);
    const shown = await open(`/console/events/default/${encodeURIComponent(event.event_id)}`, session);
    expect(shown.status).toBe(200);
    expect(shown.text).not.toContain("platform-heading");
  });
});

describe("Map again", () => {
  it("needs the session's CSRF token, and a reason", async () => {
    const { deliveryId } = await unmappedOrder();
    const session = await signIn(OPERATOR);
    const page = await open(deliveryPath(deliveryId), session);
    expect(page.text).toContain(`<form method="post" action="${deliveryPath(deliveryId)}/remap">`);
    const forged = await post(`${deliveryPath(deliveryId)}/remap`, session, { reason: "fixed" });
    expect(forged.status).toBe(403);
    const wrong = await post(`${deliveryPath(deliveryId)}/remap`, session, { csrf: "x".repeat(43), reason: "fixed" });
    expect(wrong.status).toBe(403);
    const noReason = await post(`${deliveryPath(deliveryId)}/remap`, session, { csrf: session.csrf, reason: " " });
    expect(noReason.status).toBe(400);
    expect((await h.gw.gateway.register.sources.find(deliveryId))?.remappedAt).toBeNull();
  });

  it("says why it still does not map, and changes nothing", async () => {
    const { deliveryId, order } = await unmappedOrder();
    const session = await signIn(OPERATOR);
    const answer = await post(`${deliveryPath(deliveryId)}/remap`, session, { csrf: session.csrf, reason: "try" });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain("Still does not map");
    expect(answer.text).toContain("unknown SKU &quot;TEA-OOLONG&quot;");
    expect(await h.gw.gateway.register.find("shop-a", `shopify:${order.id}`)).toBeUndefined();
  });

  describe("after the settings are fixed (a gateway on the same database)", () => {
    let fixed: TestGateway | undefined;
    afterAll(async () => {
      await fixed?.close();
    });

    it("maps it: the event's link on the delivery page, one order in 1C; a second time is refused", async () => {
      const { deliveryId, order } = await unmappedOrder();
      fixed = await startTestGateway({
        ONEC_URL: h.onec.url,
        SOURCES_FILE: FIXED_SOURCES,
        OPERATORS_FILE,
        DATABASE_URL: h.gw.databasePath,
        DELIVERY_POLL_MS: "50",
      });
      const session = await signIn(OPERATOR, fixed.url);
      const path = `${deliveryPath(deliveryId)}/remap`;
      const answer = await post(path, session, { csrf: session.csrf, reason: "TEA-OOLONG mapped" }, fixed.url);
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toBe(`${deliveryPath(deliveryId)}?remapped=1`);
      const eventId = `shopify:${order.id}`;
      const result = await open(answer.headers.location ?? "", session, fixed.url);
      expect(result.text).toContain("Mapped again");
      expect(result.text).toContain(` by ${OPERATOR.name}</dd>`);
      expect(result.text).toContain("<dt>Why</dt><dd>TEA-OOLONG mapped</dd>");
      expect(result.text).toContain(`href="${eventPath(eventId)}"`);
      expect(result.text).not.toContain("Map again</button>");

      const [booked, ...more] = await onecOrdersFor(order.id as bigint, 1);
      expect(more).toEqual([]);
      expect(booked?.booking?.lines).toEqual([{ sku: "TEA-002", quantity: 2, price: "50.00" }]);

      const again = await post(path, session, { csrf: session.csrf, reason: "again" }, fixed.url);
      expect(again.status).toBe(409);
      expect(again.text).toContain("mapped again already");
      expect(await onecOrdersFor(order.id as bigint, 1)).toHaveLength(1);

      const event = await open(eventPath(eventId), session, fixed.url);
      expect(event.text).toContain(`href="${deliveryPath(deliveryId)}"`);
    });
  });
});
