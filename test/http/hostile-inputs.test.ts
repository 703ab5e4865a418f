import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import { type RawAnswer, rawExchange, rawRequestBytes } from "../support/raw-http.ts";

/**
 * The edges of what a sender may send (issue 8), one row per request, each
 * sent as raw bytes so that no client library tidies it up first. Expected
 * answers come from the issue and the RFCs: JSON is UTF-8 (RFC 8259 §8.1),
 * an unsupported content coding is 415 with Accept-Encoding (RFC 9110
 * §15.5.16), every refusal is application/problem+json (RFC 9457) with a
 * correlation id, and nothing refused is recorded.
 */

const SHOP = "token-of-shop-a-0123456789";
const OTHER = "token-of-nobody-0123456789";
const ADMIN = "admin-token-0123456789";
const PATH = "/integration/v1/orders/paid";
const ADMIN_EVENTS = "/integration/v1/admin/events";
const CORRELATION = "hostile-input-1";

const h = gatewayWithEmulator({
  SENDER_TOKENS: `shop-a:${SHOP}`,
  ALLOW_ANONYMOUS: "false",
  ADMIN_TOKEN: ADMIN,
  RATE_LIMIT_MAX: "100000",
});

const AUTH = `Authorization: Bearer ${SHOP}`;
const JSON_TYPE = "Content-Type: application/json";

/** A POST of `body` to the senders' route with a valid token, plus the given headers. */
function post(body: string | Buffer, headers: readonly string[] = [JSON_TYPE], target = PATH): Buffer {
  return rawRequestBytes({
    method: "POST",
    target,
    headers: [AUTH, `X-Correlation-ID: ${CORRELATION}`, ...headers],
    body,
  });
}

function get(target: string, token = SHOP): Buffer {
  return rawRequestBytes({
    method: "GET",
    target,
    headers: [`Authorization: Bearer ${token}`, `X-Correlation-ID: ${CORRELATION}`],
  });
}

const text = (event: OrderPaidEvent) => JSON.stringify(event);

/** The event's JSON with the first item's quantity (2 in the example) written as `quantity`. */
const withQuantity = (quantity: string) => (event: OrderPaidEvent) =>
  post(text(event).replace('"quantity":2', `"quantity":${quantity}`));

/** The event's UTF-8 bytes with `bytes` in the middle of the customer's name. */
const withBytesInName = (bytes: number[]) => (event: OrderPaidEvent) => {
  const encoded = Buffer.from(text({ ...event, order: { ...event.order, customer: { name: "Anna#Smirnova" } } }));
  const at = encoded.indexOf("#");
  return post(Buffer.concat([encoded.subarray(0, at), Buffer.from(bytes), encoded.subarray(at + 1)]));
};

interface Refusal {
  name: string;
  /** The raw request, built around a fresh event (the row decides whether it sends it). */
  request: (event: OrderPaidEvent) => Buffer;
  /** Changes to the fresh event before `request` sees it. */
  event?: (event: OrderPaidEvent) => void;
  status: number;
  /** The problem `type`'s last segment. */
  type: string;
  /**
   * false: the row sends the event, and it must not be recorded.
   * undefined: the row sends no event (a GET).
   */
  recorded?: false;
  detail?: RegExp;
  headers?: Record<string, string>;
  /** JSON Pointers the problem's `errors` must list, in order. */
  errors?: string[];
}

const REFUSED: Refusal[] = [
  // Media types and charsets: JSON is UTF-8 (RFC 8259 §8.1).
  {
    name: "a text/plain body",
    request: (e) => post(text(e), ["Content-Type: text/plain"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
  },
  {
    name: "a text/plain; charset=utf-8 body (fetch's default for a string)",
    request: (e) => post(text(e), ["Content-Type: text/plain;charset=UTF-8"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
  },
  {
    name: "application/json; charset=iso-8859-1",
    request: (e) => post(text(e), ["Content-Type: application/json; charset=iso-8859-1"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    detail: /charset.*iso-8859-1.*UTF-8/i,
  },
  {
    name: 'application/json; charset="utf-16"',
    request: (e) => post(text(e), ['Content-Type: application/json; charset="utf-16"']),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    detail: /charset.*utf-16.*UTF-8/i,
  },
  {
    name: "a Content-Type that is no media type at all (json)",
    request: (e) => post(text(e), ["Content-Type: json"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    detail: /Content-Type: application\/json/,
  },
  {
    name: "a body without Content-Type",
    request: (e) => post(text(e), []),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    detail: /Content-Type: application\/json/,
  },
  // Content codings (RFC 9110 §8.4, §15.5.16): the gateway reads only identity.
  {
    name: "Content-Encoding: gzip over a plain body",
    request: (e) => post(text(e), [JSON_TYPE, "Content-Encoding: gzip"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    detail: /Content-Encoding.*gzip/,
    headers: { "accept-encoding": "identity" },
  },
  {
    name: "Content-Encoding: gzip over a gzipped body",
    request: (e) => post(gzipSync(text(e)), [JSON_TYPE, "Content-Encoding: gzip"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    headers: { "accept-encoding": "identity" },
  },
  {
    name: "Content-Encoding: br",
    request: (e) => post(text(e), [JSON_TYPE, "Content-Encoding: br"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    headers: { "accept-encoding": "identity" },
  },
  {
    name: "Content-Encoding: identity, gzip",
    request: (e) => post(text(e), [JSON_TYPE, "Content-Encoding: identity, gzip"]),
    status: 415,
    type: "unsupported-media-type",
    recorded: false,
    headers: { "accept-encoding": "identity" },
  },
  // Bytes that are not UTF-8, inside a string.
  ...[
    ["0xFF", [0xff]],
    ["0xFE in the same place", [0xfe]],
    ["a lone continuation byte 0x80", [0x80]],
    ["an overlong '/' (C0 AF)", [0xc0, 0xaf]],
    ["a surrogate encoded as UTF-8 (ED A0 80)", [0xed, 0xa0, 0x80]],
    ["a truncated sequence (E2 82)", [0xe2, 0x82]],
  ].map(
    ([what, bytes]): Refusal => ({
      name: `${what} inside a string`,
      request: withBytesInName(bytes as number[]),
      status: 400,
      type: "invalid-json",
      recorded: false,
      detail: /UTF-8/,
    }),
  ),
  // event_id: dot segments cannot be followed in a Location.
  ...[".", ".."].map(
    (id): Refusal => ({
      name: `event_id "${id}"`,
      event: (e) => {
        e.event_id = id;
      },
      request: (e) => post(text(e)),
      status: 400,
      type: "invalid-event-id",
      recorded: false,
    }),
  ),
  {
    name: "the status URL of an unknown 120-character event_id",
    request: () => get(`${PATH}/${"u".repeat(120)}`),
    status: 404,
    type: "not-found",
  },
  {
    name: "the attempts URL of an unknown 128-character event_id",
    request: () => get(`${PATH}/${"u".repeat(128)}/attempts`),
    status: 404,
    type: "not-found",
  },
  {
    // RFC 3986 §2.3 lets a client percent-encode even unreserved characters: 128 of them are 384 in the path.
    name: "the status URL of an unknown 128-character event_id written wholly as %XX escapes",
    request: () => get(`${PATH}/${"%75".repeat(128)}`),
    status: 404,
    type: "not-found",
  },
  // URLs the router cannot read.
  {
    name: "a bad % escape in the path of a POST",
    request: (e) => post(text(e), [JSON_TYPE], "/integration/v1/orders/pa%zzid"),
    status: 400,
    type: "bad-request",
    recorded: false,
  },
  {
    name: "a truncated % escape in an event_id",
    request: () => get(`${PATH}/evt%E0%A4%A`),
    status: 400,
    type: "bad-request",
  },
  {
    name: "a 2000-character event_id in the status URL",
    request: () => get(`${PATH}/${"a".repeat(2000)}`),
    status: 414,
    type: "uri-too-long",
  },
  {
    name: "a 2000-character event_id in the admin URL",
    request: () => get(`${ADMIN_EVENTS}/${"a".repeat(2000)}`, ADMIN),
    status: 414,
    type: "uri-too-long",
  },
  // Expect other than 100-continue (RFC 9110 §10.1.1).
  {
    name: "Expect: 100-foo",
    request: (e) => post(text(e), [JSON_TYPE, "Expect: 100-foo"]),
    status: 417,
    type: "expectation-failed",
    recorded: false,
  },
  // Headers that must appear once: Node would keep the first (or join them) in silence.
  {
    name: "two Authorization headers, the valid one first",
    request: (e) => post(text(e), [JSON_TYPE, `Authorization: Bearer ${OTHER}`]),
    status: 400,
    type: "bad-request",
    recorded: false,
    detail: /Authorization/,
  },
  {
    name: "two Authorization headers, the valid one second",
    request: (e) =>
      rawRequestBytes({
        method: "POST",
        target: PATH,
        headers: [`Authorization: Bearer ${OTHER}`, AUTH, JSON_TYPE, `X-Correlation-ID: ${CORRELATION}`],
        body: text(e),
      }),
    status: 400,
    type: "bad-request",
    recorded: false,
    detail: /Authorization/,
  },
  {
    name: "two Content-Type headers",
    request: (e) => post(text(e), [JSON_TYPE, "Content-Type: text/plain"]),
    status: 400,
    type: "bad-request",
    recorded: false,
    detail: /Content-Type/,
  },
  {
    name: "two Content-Encoding headers",
    request: (e) => post(text(e), [JSON_TYPE, "Content-Encoding: identity", "content-encoding: identity"]),
    status: 400,
    type: "bad-request",
    recorded: false,
    detail: /Content-Encoding/i,
  },
  {
    name: "two Idempotency-Key headers",
    request: (e) => post(text(e), [JSON_TYPE, `Idempotency-Key: ${e.event_id}`, `Idempotency-Key: ${e.event_id}`]),
    status: 400,
    type: "bad-request",
    recorded: false,
    detail: /Idempotency-Key/,
  },
  {
    name: "two Authorization headers on a route without a body",
    request: () =>
      rawRequestBytes({
        method: "GET",
        target: "/healthz",
        headers: [AUTH, `Authorization: Bearer ${OTHER}`, `X-Correlation-ID: ${CORRELATION}`],
      }),
    status: 400,
    type: "bad-request",
    detail: /Authorization/,
  },
  // quantity is an integer: its JSON text must not have a fraction or an exponent.
  ...["1.9999999999999999", "2.0", "2e0", "20E-1", "0.2e1"].map(
    (quantity): Refusal => ({
      name: `"quantity": ${quantity}`,
      request: withQuantity(quantity),
      status: 422,
      type: "schema-violation",
      recorded: false,
      errors: ["/order/items/0/quantity"],
      detail: /schema/,
    }),
  ),
  {
    name: '"quantity": 1.5 is listed once',
    request: withQuantity("1.5"),
    status: 422,
    type: "schema-violation",
    recorded: false,
    errors: ["/order/items/0/quantity"],
  },
];

function problemOf(answer: RawAnswer): Record<string, unknown> {
  expect(answer.headers["content-type"]?.[0]).toMatch(/^application\/problem\+json/);
  return JSON.parse(answer.body);
}

describe("hostile inputs: every refusal is a problem document, and nothing is recorded", () => {
  it.each(REFUSED.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    const event = orderPaidEvent(row.event);
    const answer = await rawExchange(h.gw.url, row.request(event));

    expect(answer.status).toBe(row.status);
    const problem = problemOf(answer);
    expect(problem).toMatchObject({ type: `/integration/v1/problems/${row.type}`, status: row.status });
    const correlation = answer.headers["x-correlation-id"];
    expect(correlation).toHaveLength(1);
    expect(problem.correlation_id).toBe(correlation?.[0]);
    expect(correlation?.[0]).toBe(CORRELATION);
    if (row.detail !== undefined) expect(problem.detail).toMatch(row.detail);
    for (const [name, value] of Object.entries(row.headers ?? {})) expect(answer.headers[name]).toEqual([value]);
    if (row.errors !== undefined) {
      expect((problem.errors as Array<{ path: string }>).map((e) => e.path)).toEqual(row.errors);
    }
    if (row.recorded === false) expect(await h.gw.gateway.register.findByEventId(event.event_id)).toEqual([]);
  });
});

interface Acceptance {
  name: string;
  request: (event: OrderPaidEvent) => Buffer;
}

const ACCEPTED: Acceptance[] = [
  ...[
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    'application/json; charset="utf-8"',
    "application/json; charset=utf-8; format=flowed",
    "application/vnd.shop.order+json; charset=utf-8",
    "Application/JSON",
  ].map(
    (type): Acceptance => ({ name: `Content-Type: ${type}`, request: (e) => post(text(e), [`Content-Type: ${type}`]) }),
  ),
  { name: "Content-Encoding: identity", request: (e) => post(text(e), [JSON_TYPE, "Content-Encoding: identity"]) },
  {
    name: "a UTF-8 byte order mark before the JSON",
    request: (e) => post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text(e))])),
  },
  { name: "Expect: 100-continue", request: (e) => post(text(e), [JSON_TYPE, "Expect: 100-continue"]) },
];

describe("what a client may send is accepted", () => {
  it.each(ACCEPTED.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    const event = orderPaidEvent();
    const answer = await rawExchange(h.gw.url, row.request(event));
    expect(answer.status, answer.body).toBe(201);
    expect(answer.headers["x-correlation-id"]).toEqual([CORRELATION]);
    expect(await h.gw.gateway.register.findByEventId(event.event_id)).toHaveLength(1);
  });

  it("accepts two X-Correlation-ID headers (a proxy added one) under a correlation id of its own making", async () => {
    const event = orderPaidEvent();
    const answer = await rawExchange(h.gw.url, post(text(event), [JSON_TYPE, "X-Correlation-ID: added-by-proxy"]));
    expect(answer.status, answer.body).toBe(201);
    const correlation = answer.headers["x-correlation-id"];
    expect(correlation).toHaveLength(1);
    expect(correlation?.[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("serves every route of a 128-character event_id (percent-encoded in the URL)", async () => {
    const eventId = `evt:${"7".repeat(60)}:${"x".repeat(63)}`;
    expect(eventId).toHaveLength(128);
    const created = await call(`${h.gw.url}${PATH}`, {
      method: "POST",
      body: text(orderPaidEvent((e) => Object.assign(e, { event_id: eventId }))),
      headers: { "content-type": "application/json", authorization: `Bearer ${SHOP}` },
    });
    expect(created.status, created.text).toBe(201);
    const location = created.headers.location ?? "";
    expect(location).toBe(`${PATH}/${encodeURIComponent(eventId)}`);

    const sender = { authorization: `Bearer ${SHOP}` };
    const admin = { authorization: `Bearer ${ADMIN}` };
    const encoded = encodeURIComponent(eventId);
    const answers = await Promise.all([
      call(`${h.gw.url}${location}`, { headers: sender }),
      call(`${h.gw.url}${location}/attempts`, { headers: sender }),
      call(`${h.gw.url}${PATH}/${eventId}`, { headers: sender }),
      call(`${h.gw.url}${ADMIN_EVENTS}/${encoded}`, { headers: admin }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    for (const answer of answers) expect(answer.json().event_id).toBe(eventId);

    const replay = await call(`${h.gw.url}${ADMIN_EVENTS}/${encoded}/replay`, {
      method: "POST",
      body: JSON.stringify({ reason: "a long id", force: true }),
      headers: { ...admin, "content-type": "application/json" },
    });
    expect(replay.status, replay.text).toBe(202);
  });
});
