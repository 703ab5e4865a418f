import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/http/openapi/types.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, type HttpAnswer, postEvent } from "../support/http.ts";
import { SHOPIFY_SECRET, shopifyBody, shopifyHeaders, shopifyOrder } from "../support/platforms/shopify.ts";
import { formHeaders, TEST_REQUEST, TILDA_SECRET, tildaWebhookPath } from "../support/platforms/tilda.ts";
import { wooPing } from "../support/platforms/woocommerce.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";
import { documentAjv, type OpenApiDocument, type ResponseObject } from "./openapi-document.ts";

/**
 * Real answers of a running gateway, over real sockets, checked against the
 * document that gateway serves at /openapi.json: each answer's status is one
 * its operation documents, its body matches that status's schema for its
 * media type, every header of the document's glossary it carries is declared
 * on that answer (and matches its schema), and a problem answer carries every
 * header its response declares for its problem type. openapi.test.ts reads
 * the document alone; this is what it is checked against.
 */

const ORDERS = "/integration/v1/orders/paid";
const WEBHOOKS = "/integration/v1/webhooks";
const RATE_LIMIT_MAX = 20;
const SHOP_A = "token-of-shop-a-0123456789";
const SHOP_B = "token-of-shop-b-0123456789";
const SHOP_L = "token-of-shop-l-0123456789";
const WOO_SECRET = "wc_openapi_secret_5f1d0c9a7b3e";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-s", platform: "shopify", secrets: [SHOPIFY_SECRET] },
  { sender: "shop-r", platform: "shopify", secrets: [SHOPIFY_SECRET] },
  { sender: "shop-w", platform: "woocommerce", secrets: [WOO_SECRET] },
  { sender: "shop-t", platform: "tilda", secrets: [TILDA_SECRET], currency: "RUB" },
]);

const h = gatewayWithEmulator({
  SOURCES_FILE: sourcesFile,
  SENDER_TOKENS: `shop-a:${SHOP_A},shop-b:${SHOP_B},shop-l:${SHOP_L}`,
  ALLOW_ANONYMOUS: "false",
  RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
  RATE_LIMIT_WINDOW_MS: "60000",
});

let doc: OpenApiDocument;
let ajv: ReturnType<typeof documentAjv>;
beforeAll(async () => {
  const served = await call(`${h.gw.url}/openapi.json`);
  expect(served.status).toBe(200);
  doc = JSON.parse(served.text) as OpenApiDocument;
  ajv = documentAjv(doc);
});

function validationErrors(schema: JsonObject, value: unknown): unknown[] {
  const validate = ajv.compile(schema);
  return validate(value) ? [] : (validate.errors ?? []);
}

/** `/orders/paid/:event_id` as the document writes it. */
const documentPath = (route: string) => route.replace(/:([A-Za-z_]+)/g, "{$1}");

/** The problem type's slug of a problem answer: the last segment of its `type`. */
function slugOf(answer: HttpAnswer): string | undefined {
  if (!answer.headers["content-type"]?.startsWith("application/problem+json")) return undefined;
  const type = answer.json().type;
  return typeof type === "string" ? type.slice(type.lastIndexOf("/") + 1) : undefined;
}

/**
 * Whether a header the response declares is on every answer of this problem
 * type: the document says "Sent with `slug`, ..." of a header only some of
 * the response's problem types carry, and nothing of one they all carry.
 */
function declaredFor(description: string, slug: string): boolean {
  return !description.includes("Sent with") || description.includes(`\`${slug}\``);
}

/** Headers whose description says when a problem carries them: Accept-Encoding only on a 415 for a content coding. */
const SENT_ON_A_CONDITION = new Set(["Accept-Encoding"]);

/** Checks one real answer of `method route` against the document; `where` names it in failures. */
function expectDocumented(where: string, method: "get" | "post", route: string, answer: HttpAnswer): void {
  const operation = doc.paths[documentPath(route)]?.[method];
  expect(operation, `${where}: ${method} ${route} is not in the document`).toBeDefined();
  const response: ResponseObject | undefined = operation?.responses[String(answer.status)];
  expect(response, `${where}: ${answer.status} is not documented for ${method} ${route}`).toBeDefined();
  if (response === undefined) return;

  const mediaType = (answer.headers["content-type"] ?? "").split(";")[0]?.trim() ?? "";
  const media = response.content?.[mediaType];
  expect(media, `${where}: ${answer.status} ${mediaType} is not a documented media type`).toBeDefined();
  const body: unknown = mediaType.endsWith("json") ? JSON.parse(answer.text) : answer.text;
  expect(validationErrors(media?.schema ?? {}, body), `${where}: ${answer.status} body ${answer.text}`).toEqual([]);

  const declared = new Map(
    Object.entries(response.headers ?? {}).map(([name, declaration]) => [name.toLowerCase(), declaration]),
  );
  for (const name of Object.keys(doc.components.headers)) {
    const value = answer.headers[name.toLowerCase()];
    if (value === undefined) continue;
    const declaration = declared.get(name.toLowerCase());
    expect(declaration, `${where}: ${answer.status} carries ${name}, undeclared`).toBeDefined();
    if (declaration !== undefined && "schema" in declaration) {
      expect(validationErrors(declaration.schema, value), `${where}: ${name}: ${value}`).toEqual([]);
    }
  }
  const slug = slugOf(answer);
  if (slug === undefined) return;
  for (const [name, declaration] of Object.entries(response.headers ?? {})) {
    if (!("description" in declaration) || declaration.description === undefined) continue;
    if (SENT_ON_A_CONDITION.has(name)) continue;
    if (declaredFor(declaration.description, slug)) {
      expect(
        answer.headers[name.toLowerCase()],
        `${where}: ${answer.status} ${slug} declares ${name}, not sent`,
      ).toBeDefined();
    }
  }
}

const RATE_LIMIT_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

function postRaw(body: string, headers: Record<string, string>): Promise<HttpAnswer> {
  return call(`${h.gw.url}${ORDERS}`, { method: "POST", body, headers });
}

describe("the senders' order routes, answered for real", () => {
  it("answer as the document says, X-RateLimit-* included where they carry them", async () => {
    const event = orderPaidEvent();
    const json = { "content-type": "application/json", ...bearer(SHOP_A) };
    const first = await postEvent(h.gw.url, event, bearer(SHOP_A));
    // 201 when 1C answered within SYNC_WAIT_MS, 202 otherwise; both are documented with their headers.
    expect([201, 202]).toContain(first.status);
    const counted: [string, HttpAnswer][] = [
      ["first POST", first],
      ["repeat", await postEvent(h.gw.url, event, bearer(SHOP_A))],
      [
        "another body",
        await postEvent(h.gw.url, { ...event, payment: { ...event.payment, id: "pay_other" } }, bearer(SHOP_A)),
      ],
      ["schema violation", await postEvent(h.gw.url, { ...orderPaidEvent(), surprise: true }, bearer(SHOP_A))],
      ["invalid JSON", await postRaw("{", json)],
      [
        "Idempotency-Key mismatch",
        await postEvent(h.gw.url, orderPaidEvent(), { ...bearer(SHOP_A), "idempotency-key": "other" }),
      ],
      ["text/plain", await postRaw("{}", { ...bearer(SHOP_A), "content-type": "text/plain" })],
      ["gzip", await postRaw("{}", { ...json, "content-encoding": "gzip" })],
      ["over the body limit", await postRaw(`{"pad":"${"x".repeat(300 * 1024)}"}`, json)],
    ];
    const statuses = counted.map(([, answer]) => answer.status);
    expect(statuses.slice(2)).toEqual([409, 422, 400, 400, 415, 415, 413]);
    const looked: [string, HttpAnswer][] = [
      ["status", await call(`${h.gw.url}${ORDERS}/${event.event_id}`, { headers: bearer(SHOP_A) })],
      ["attempts", await call(`${h.gw.url}${ORDERS}/${event.event_id}/attempts`, { headers: bearer(SHOP_A) })],
      ["unknown status", await call(`${h.gw.url}${ORDERS}/evt-nobody`, { headers: bearer(SHOP_A) })],
      ["unknown attempts", await call(`${h.gw.url}${ORDERS}/evt-nobody/attempts`, { headers: bearer(SHOP_A) })],
    ];
    expect(looked.map(([, answer]) => answer.status)).toEqual([200, 200, 404, 404]);

    for (const [where, answer] of counted) {
      expectDocumented(where, "post", ORDERS, answer);
      // Counted against the sender's limit: each says how much is left.
      for (const name of RATE_LIMIT_HEADERS) expect(answer.headers[name], `${where}: ${name}`).toMatch(/^[0-9]+$/);
    }
    const routes = [`${ORDERS}/:event_id`, `${ORDERS}/:event_id/attempts`];
    looked.forEach(([where, answer], index) => {
      expectDocumented(where, "get", routes[index % 2] ?? "", answer);
      for (const name of RATE_LIMIT_HEADERS) expect(answer.headers[name], `${where}: ${name}`).toMatch(/^[0-9]+$/);
    });
  });

  it("answer refusals made before the sender is counted (401, 414) without X-RateLimit-*", async () => {
    const unauthorized = await postEvent(h.gw.url, orderPaidEvent(), {});
    const tooLong = await call(`${h.gw.url}${ORDERS}/${"x".repeat(400)}`, { headers: bearer(SHOP_B) });
    expect([unauthorized.status, tooLong.status]).toEqual([401, 414]);
    expectDocumented("no token", "post", ORDERS, unauthorized);
    expectDocumented("over-long event_id", "get", `${ORDERS}/:event_id`, tooLong);
    for (const name of RATE_LIMIT_HEADERS) {
      expect(unauthorized.headers[name], name).toBeUndefined();
      expect(tooLong.headers[name], name).toBeUndefined();
    }
  });

  it("answer 429 past the limit with Retry-After and X-RateLimit-*", async () => {
    const answers: HttpAnswer[] = [];
    for (let i = 0; i <= RATE_LIMIT_MAX; i++) {
      answers.push(await call(`${h.gw.url}${ORDERS}/evt-nobody`, { headers: bearer(SHOP_L) }));
    }
    const limited = answers.at(-1);
    expect(limited?.status).toBe(429);
    if (limited !== undefined) expectDocumented("over the limit", "get", `${ORDERS}/:event_id`, limited);
  });

  it("never answer 414 on POST orders/paid, and the document's intro does not say it does", async () => {
    const json = { "content-type": "application/json", ...bearer(SHOP_B) };
    // The route has no path parameter: a longer path is another, unknown route; a long query is ignored;
    // a request line over the header limit is 431 before any route.
    const longPath = await call(`${h.gw.url}${ORDERS}/${"x".repeat(400)}`, {
      method: "POST",
      body: "{}",
      headers: json,
    });
    const longQuery = await call(`${h.gw.url}${ORDERS}?${"q".repeat(12 * 1024)}`, {
      method: "POST",
      body: "{",
      headers: json,
    });
    const overLimit = await call(`${h.gw.url}${ORDERS}?${"q".repeat(17 * 1024)}`, {
      method: "POST",
      body: "{",
      headers: json,
    });
    expect([longPath.status, longQuery.status, overLimit.status]).toEqual([404, 400, 431]);
    const refusals = /Refused before anything was recorded \(([^)]*)\)/.exec(doc.info.description)?.[1];
    expect(refusals).toBeDefined();
    const listed = [...(refusals ?? "").matchAll(/\b([45][0-9]{2})\b/g)].map((match) => match[1]);
    const documented = Object.keys(doc.paths[ORDERS]?.post?.responses ?? {});
    expect(listed.filter((status) => !documented.includes(status ?? ""))).toEqual([]);

    expectDocumented("long query", "post", ORDERS, longQuery);
    expectDocumented("URL over the header limit", "post", ORDERS, overLimit);
  });
});

describe("the platforms' webhook routes, answered for real", () => {
  it("answer WooCommerce's creation ping, Tilda's test request and a Shopify test order as documented", async () => {
    const ping = wooPing();
    const woo = await call(`${h.gw.url}${WEBHOOKS}/woocommerce/shop-w`, {
      method: "POST",
      body: ping.body.toString("utf8"),
      headers: ping.headers,
    });
    expect([woo.status, woo.json()]).toEqual([200, { status: "ok" }]);
    expectDocumented("WooCommerce ping", "post", `${WEBHOOKS}/woocommerce/:sender`, woo);

    const tilda = await call(`${h.gw.url}${tildaWebhookPath("shop-t")}`, {
      method: "POST",
      body: TEST_REQUEST,
      headers: formHeaders(),
    });
    expect([tilda.status, tilda.text]).toEqual([200, "ok"]);
    expectDocumented("Tilda test request", "post", `${WEBHOOKS}/tilda/:sender/:token`, tilda);

    // Shopify has no ping (its admin test notification fails the app-secret HMAC); a test order is kept as ignored.
    const body = shopifyBody(shopifyOrder({ test: true }));
    const shopify = await call(`${h.gw.url}${WEBHOOKS}/shopify/shop-s`, {
      method: "POST",
      body,
      headers: shopifyHeaders(body),
    });
    expect([shopify.status, shopify.json().status]).toEqual([200, "ignored"]);
    expectDocumented("Shopify test order", "post", `${WEBHOOKS}/shopify/:sender`, shopify);
  });

  it("answer a payment, a bad signature and a malformed body as documented", async () => {
    const route = `${WEBHOOKS}/shopify/:sender`;
    const url = `${h.gw.url}${WEBHOOKS}/shopify/shop-s`;
    const paid = shopifyBody(
      shopifyOrder({ id: 730000000000000001n, admin_graphql_api_id: "gid://shopify/Order/730000000000000001" }),
    );
    const payment = await call(url, { method: "POST", body: paid, headers: shopifyHeaders(paid) });
    const forged = await call(url, {
      method: "POST",
      body: paid,
      headers: shopifyHeaders(paid, { secret: "not-the-shops-secret" }),
    });
    const malformed = await call(url, { method: "POST", body: "not json", headers: shopifyHeaders("not json") });
    expect([payment.status < 300, forged.status, malformed.status]).toEqual([true, 401, 400]);
    expectDocumented("payment", "post", route, payment);
    expectDocumented("forged", "post", route, forged);
    expectDocumented("malformed", "post", route, malformed);
  });

  it("answer 429 past the sender's limit with Retry-After only, as documented", async () => {
    const url = `${h.gw.url}${WEBHOOKS}/shopify/shop-r`;
    let limited: HttpAnswer | undefined;
    for (let i = 0; i <= RATE_LIMIT_MAX && limited === undefined; i++) {
      const body = shopifyBody(shopifyOrder({ test: true, id: 740000000000000000n + BigInt(i) }));
      const answer = await call(url, { method: "POST", body, headers: shopifyHeaders(body) });
      if (answer.status === 429) limited = answer;
    }
    expect(limited?.headers["retry-after"]).toMatch(/^[0-9]+$/);
    for (const name of RATE_LIMIT_HEADERS) expect(limited?.headers[name], name).toBeUndefined();
    if (limited !== undefined) expectDocumented("over the limit", "post", `${WEBHOOKS}/shopify/:sender`, limited);
  });
});
