import { once } from "node:events";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type EmulatorOrder,
  type OnecEmulator,
  type OnecEmulatorOptions,
  type PostReceived,
  startOnecEmulator,
} from "../src/onec-emulator/emulator.ts";

const EXAMPLE = readFileSync(new URL("../schemas/examples/order-paid.json", import.meta.url), "utf8");
const OTHER_BODY = JSON.stringify({ ...JSON.parse(EXAMPLE), occurred_at: "2026-11-29T12:35:00Z" });
const JSON_TYPE = "application/json; charset=utf-8";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ORDER_NUMBER = /^ORD-\d{6}$/;

interface ErrorBody {
  error: { code: string; message: string };
}
interface OrderBody {
  order: { id: string; number: string };
}

let emulator: OnecEmulator;
const extra: OnecEmulator[] = [];

beforeEach(async () => {
  emulator = await startOnecEmulator();
});

afterEach(async () => {
  await Promise.all([emulator, ...extra.splice(0)].map((e) => e.close()));
});

async function startExtra(options: OnecEmulatorOptions): Promise<OnecEmulator> {
  const started = await startOnecEmulator(options);
  extra.push(started);
  return started;
}

/** A header set to null is left out, to test its absence. */
type HeaderPatch = Record<string, string | null>;

function post(
  body: string | Uint8Array = EXAMPLE,
  patch: HeaderPatch = {},
  init: RequestInit = {},
  target: OnecEmulator = emulator,
): Promise<Response> {
  const headers: Record<string, string> = {};
  const merged: HeaderPatch = {
    "content-type": JSON_TYPE,
    "x-correlation-id": "corr-1",
    "idempotency-key": "evt-1",
    ...patch,
  };
  for (const [name, value] of Object.entries(merged)) if (value !== null) headers[name] = value;
  return fetch(`${target.url}/v1/orders/paid`, { method: "POST", headers, body, ...init });
}

async function expectError(response: Response, status: number, code: string): Promise<ErrorBody> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe(JSON_TYPE);
  const body = (await response.json()) as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  return body;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

describe("POST /v1/orders/paid", () => {
  it("creates an order once and answers a byte-identical resend with the same order", async () => {
    const first = await post();
    expect(first.status).toBe(201);
    expect(first.headers.get("content-type")).toBe(JSON_TYPE);
    const created = (await first.json()) as OrderBody;
    expect(created.order.id).toMatch(UUID);
    expect(created.order.number).toBe("ORD-000001");

    const second = await post();
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(created);

    expect(emulator.orders()).toHaveLength(1);
    expect(emulator.postCount()).toBe(2);
  });

  it("numbers orders in sequence and stores what was received", async () => {
    await post(EXAMPLE, { "idempotency-key": "a" });
    const second = (await (
      await post(EXAMPLE, { "idempotency-key": "b", "x-correlation-id": "corr-b" })
    ).json()) as OrderBody;
    expect(second.order.number).toBe("ORD-000002");
    const stored = emulator.orders();
    expect(stored.map((o) => o.key)).toEqual(["a", "b"]);
    expect(stored[1]).toMatchObject({ key: "b", correlationId: "corr-b", order: second.order });
    expect(stored[1]?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(stored[1]?.createdAt ?? ""))).toBe(false);
  });

  it("answers 409 when a key comes back with another body", async () => {
    expect((await post()).status).toBe(201);
    await expectError(await post(OTHER_BODY), 409, "EVENT_ID_REUSED");
    expect(emulator.orders()).toHaveLength(1);
  });

  it("answers 422 for an unknown SKU when the catalogue is set, storing nothing", async () => {
    emulator.setFaults({ knownSkus: ["TEA-001"] });
    const body = await expectError(await post(), 422, "UNKNOWN_SKU");
    expect(body.error.message).toBe("unknown article: MUG-010");
    expect(emulator.orders()).toHaveLength(0);

    emulator.setFaults({ knownSkus: ["TEA-001", "MUG-010"] });
    expect((await post()).status).toBe(201);
  });

  it("answers 400 BAD_JSON for a body that is not JSON", async () => {
    await expectError(await post("{not json"), 400, "BAD_JSON");
    expect(emulator.orders()).toHaveLength(0);
  });

  it("accepts a body that starts with a UTF-8 BOM", async () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(EXAMPLE, "utf8")]);
    expect((await post(withBom)).status).toBe(201);
  });

  it("answers 400 MISSING_IDEMPOTENCY_KEY without a key, BAD_IDEMPOTENCY_KEY for an overlong one (contract 2)", async () => {
    await expectError(await post(EXAMPLE, { "idempotency-key": null }), 400, "MISSING_IDEMPOTENCY_KEY");
    await expectError(await post(EXAMPLE, { "idempotency-key": "k".repeat(301) }), 400, "BAD_IDEMPOTENCY_KEY");
    expect((await post(EXAMPLE, { "idempotency-key": "k".repeat(300) })).status).toBe(201);
  });

  it("answers 400 BAD_EVENT when order.items is missing", async () => {
    await expectError(await post(JSON.stringify({ order: { id: "A-1" } })), 400, "BAD_EVENT");
    await expectError(await post("[]"), 400, "BAD_EVENT");
  });

  it("answers 415 for a body that is not declared JSON", async () => {
    await expectError(await post(EXAMPLE, { "content-type": "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 413 for a body over 1 MiB", async () => {
    await expectError(await post("x".repeat(1024 * 1024 + 1)), 413, "PAYLOAD_TOO_LARGE");
    expect(emulator.orders()).toHaveLength(0);
  });

  it("emits post for every request received", async () => {
    const seen: PostReceived[] = [];
    emulator.events.on("post", (event: PostReceived) => seen.push(event));
    await post();
    await post("{", { "idempotency-key": null, "x-correlation-id": "corr-2" });
    expect(seen).toEqual([
      { key: "evt-1", correlationId: "corr-1" },
      { key: undefined, correlationId: "corr-2" },
    ]);
  });
});

describe("Basic auth", () => {
  it("refuses missing or wrong credentials and accepts the right ones", async () => {
    const secured = await startExtra({ user: "exchange", password: "s3cret" });
    const missing = await expectError(await post(EXAMPLE, {}, {}, secured), 401, "UNAUTHORIZED");
    expect(missing.error.message).not.toBe("");
    await expectError(
      await post(EXAMPLE, { authorization: basic("exchange", "wrong") }, {}, secured),
      401,
      "UNAUTHORIZED",
    );
    expect(secured.orders()).toHaveLength(0);

    const ok = await post(EXAMPLE, { authorization: basic("exchange", "s3cret") }, {}, secured);
    expect(ok.status).toBe(201);
  });

  it("guards GET /v1/events/{id} too", async () => {
    const secured = await startExtra({ user: "exchange", password: "s3cret" });
    expect((await fetch(`${secured.url}/v1/events/evt-1`)).status).toBe(401);
    const found = await fetch(`${secured.url}/v1/events/evt-1`, {
      headers: { authorization: basic("exchange", "s3cret") },
    });
    expect(found.status).toBe(404);
  });
});

describe("GET /v1/events/{id}", () => {
  it("reports a processed event by its key, which needs no escape in the path (contract 2)", async () => {
    const key = "shop-a~evt:100234.x_y";
    const created = (await (await post(EXAMPLE, { "idempotency-key": key })).json()) as OrderBody;
    const response = await fetch(`${emulator.url}/v1/events/${key}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(JSON_TYPE);
    expect(await response.json()).toEqual({
      event_id: key,
      status: "SUCCEEDED",
      order: created.order,
      correlation_id: "corr-1",
      created_at: emulator.orders()[0]?.createdAt,
    });
  });

  it("decodes an escaped id segment, and knows no key outside the alphabet (contract 2)", async () => {
    await post(EXAMPLE, { "idempotency-key": "shop-a~evt-1" });
    const response = await fetch(`${emulator.url}/v1/events/${encodeURIComponent("shop-a~evt-1").replace("~", "%7E")}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { event_id: string }).event_id).toBe("shop-a~evt-1");
    await expectError(await post(EXAMPLE, { "idempotency-key": "shop-a/evt 1" }), 400, "BAD_IDEMPOTENCY_KEY");
    await expectError(await fetch(`${emulator.url}/v1/events/${encodeURIComponent("shop-a/evt 1")}`), 404, "NOT_FOUND");
  });

  it("answers 404 for an unknown id", async () => {
    await expectError(await fetch(`${emulator.url}/v1/events/nope`), 404, "NOT_FOUND");
  });

  it("keeps one record for keys that differ only in letter case, as 1C's register does: 409 to the other spelling, 404 for its status", async () => {
    const created = (await (await post(EXAMPLE, { "idempotency-key": "shop~ord-Ab1" })).json()) as OrderBody;
    const other = await expectError(
      await post(OTHER_BODY, { "idempotency-key": "shop~ord-aB1" }),
      409,
      "EVENT_ID_REUSED",
    );
    expect(other.error.message).toContain("letter case");
    await expectError(await fetch(`${emulator.url}/v1/events/shop~ord-aB1`), 404, "NOT_FOUND");
    const held = await fetch(`${emulator.url}/v1/events/shop~ord-Ab1`);
    expect(((await held.json()) as OrderBody).order).toEqual(created.order);
    expect(emulator.orders()).toHaveLength(1);
  });

  it("waits for an order still posting under the key (1C's shared lock), and answers it, not 404", async () => {
    emulator.setFaults({ postingMs: 300 });
    const posting = once(emulator.events, "posting");
    const posted = post(EXAMPLE, { "idempotency-key": "evt-posting" });
    await posting;
    const response = await fetch(`${emulator.url}/v1/events/evt-posting`);
    expect(response.status).toBe(200);
    const created = (await (await posted).json()) as OrderBody;
    expect(((await response.json()) as OrderBody).order).toEqual(created.order);
  });

  it("answers 503 with Retry-After when the lock wait runs out (1C's lock timeout), and still creates the order once", async () => {
    emulator.setFaults({ postingMs: 400, lockWaitMs: 50 });
    const posting = once(emulator.events, "posting");
    const posted = post(EXAMPLE, { "idempotency-key": "evt-locked" });
    await posting;
    // A retry of the same key waits for the first POST's lock and replays its order.
    const again = post(EXAMPLE, { "idempotency-key": "evt-locked" });
    const response = await fetch(`${emulator.url}/v1/events/evt-locked`);
    await expectError(response, 503, "UNAVAILABLE");
    expect(response.headers.get("retry-after")).toBe("5");
    const [first, second] = await Promise.all([posted, again]);
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(((await second.json()) as OrderBody).order).toEqual(((await first.json()) as OrderBody).order);
    expect(emulator.orders()).toHaveLength(1);
  });
});

describe("correlation id", () => {
  it("echoes the caller's id, on errors too", async () => {
    expect((await post(EXAMPLE, { "x-correlation-id": "abc-123" })).headers.get("x-correlation-id")).toBe("abc-123");
    const refused = await post("{", { "x-correlation-id": "abc-456" });
    expect(refused.headers.get("x-correlation-id")).toBe("abc-456");
  });

  it("makes one up when the caller sent none", async () => {
    const response = await post(EXAMPLE, { "x-correlation-id": null });
    expect(response.headers.get("x-correlation-id")).toMatch(UUID);
    expect(emulator.orders()[0]?.correlationId).toBe(response.headers.get("x-correlation-id"));
  });
});

describe("routing", () => {
  it("answers 404 JSON for unknown paths and 405 for wrong methods", async () => {
    await expectError(await fetch(`${emulator.url}/v2/whatever`), 404, "NOT_FOUND");
    const wrong = await fetch(`${emulator.url}/v1/orders/paid`);
    await expectError(wrong, 405, "METHOD_NOT_ALLOWED");
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(emulator.postCount()).toBe(0);
  });

  it("answers 404 JSON, never the router's own error, to a malformed escape or an over-long key", async () => {
    await expectError(await fetch(`${emulator.url}/v1/events/%zz`), 404, "NOT_FOUND");
    await expectError(await fetch(`${emulator.url}/v1/events/${"k".repeat(600)}`), 404, "NOT_FOUND");
  });
});

describe("faults", () => {
  it("answers 503 with Retry-After while unavailable and stores nothing", async () => {
    emulator.setFaults({ unavailable: true, retryAfterSeconds: 7 });
    const response = await post();
    await expectError(response, 503, "UNAVAILABLE");
    expect(response.headers.get("retry-after")).toBe("7");
    expect(response.headers.get("x-correlation-id")).toBe("corr-1");
    expect(emulator.orders()).toHaveLength(0);
    expect(emulator.postCount()).toBe(1);

    emulator.setFaults({ unavailable: false });
    expect((await post()).status).toBe(201);
  });

  it("waits latencyMs before answering", async () => {
    emulator.setFaults({ latencyMs: 200 });
    const started = performance.now();
    const response = await post();
    const elapsed = performance.now() - started;
    expect(response.status).toBe(201);
    expect(elapsed).toBeGreaterThanOrEqual(200);
  });

  it("commits and never answers with hangAfterCommit; a later resend gets the same order", async () => {
    emulator.setFaults({ hangAfterCommit: true });
    const committed = once(emulator.events, "committed") as Promise<[EmulatorOrder]>;
    const outcome = post(EXAMPLE, {}, { signal: AbortSignal.timeout(300) }).then(
      (response) => `answered ${response.status}`,
      (error: Error) => error.name,
    );
    const [order] = await committed;
    expect(order).toMatchObject({ key: "evt-1", correlationId: "corr-1" });
    expect(order.order.number).toMatch(ORDER_NUMBER);
    expect(emulator.orders()).toEqual([order]);
    expect(await outcome).toBe("TimeoutError");

    emulator.setFaults({ hangAfterCommit: false });
    const resend = await post();
    expect(resend.status).toBe(200);
    expect(await resend.json()).toEqual({ order: order.order });
  });

  it("lists the calls it holds open by key, until their caller leaves", async () => {
    emulator.setFaults({ hangAfterCommit: true });
    const caller = new AbortController();
    const committed = once(emulator.events, "committed");
    const outcome = post(EXAMPLE, {}, { signal: caller.signal }).catch((error: Error) => error.name);
    await committed;
    const listed = (await (await fetch(`${emulator.url}/_emulator/hanging`)).json()) as { keys: string[] };
    expect(listed).toEqual({ keys: ["evt-1"] });
    expect(emulator.hanging()).toEqual(["evt-1"]);

    caller.abort();
    expect(await outcome).toBe("AbortError");
    while (emulator.hanging().length > 0) await new Promise((resolve) => setImmediate(resolve));
    expect(emulator.hanging()).toEqual([]);
  });

  it("close() ends hung requests", async () => {
    emulator.setFaults({ hangAfterCommit: true });
    const committed = once(emulator.events, "committed");
    const outcome = post(EXAMPLE, {}, { signal: AbortSignal.timeout(10_000) }).then(
      (response) => `answered ${response.status}`,
      (error: Error) => error.name,
    );
    await committed;
    await emulator.close();
    expect(await outcome).toBe("TypeError");
  });

  it("drops the connection without storing anything", async () => {
    emulator.setFaults({ dropConnection: true });
    await expect(post()).rejects.toThrow(TypeError);
    expect(emulator.orders()).toHaveLength(0);
    expect(emulator.postCount()).toBe(1);
  });

  it("takes initial faults from the options", async () => {
    const strict = await startExtra({ faults: { knownSkus: [] } });
    expect(strict.faults).toMatchObject({ knownSkus: [], latencyMs: 0, unavailable: false });
    await expectError(await post(EXAMPLE, {}, {}, strict), 422, "UNKNOWN_SKU");
  });

  it("hands out copies of the faults", () => {
    const skus = ["TEA-001"];
    emulator.setFaults({ knownSkus: skus });
    skus.push("MUG-010");
    const snapshot = emulator.faults;
    snapshot.unavailable = true;
    expect(emulator.faults).toMatchObject({ knownSkus: ["TEA-001"], unavailable: false });
  });
});

describe("control endpoints", () => {
  it("reads and patches faults, lists orders and resets", async () => {
    const initial = await fetch(`${emulator.url}/_emulator/faults`);
    expect(await initial.json()).toEqual({
      latencyMs: 0,
      unavailable: false,
      retryAfterSeconds: 1,
      hangAfterCommit: false,
      dropConnection: false,
      knownSkus: null,
      maintenance: false,
      orderNotValid: null,
      refusal: null,
      processingError: null,
      agreementCurrency: null,
      postingMs: 0,
      // 1C's own default wait for a managed lock: 20 s.
      lockWaitMs: 20_000,
    });

    const patched = await fetch(`${emulator.url}/_emulator/faults`, {
      method: "PUT",
      headers: { "content-type": JSON_TYPE },
      body: JSON.stringify({ retryAfterSeconds: 5, knownSkus: ["TEA-001", "MUG-010"] }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ retryAfterSeconds: 5, knownSkus: ["TEA-001", "MUG-010"] });
    expect(emulator.faults.retryAfterSeconds).toBe(5);

    const created = (await (await post()).json()) as OrderBody;
    const listed = (await (await fetch(`${emulator.url}/_emulator/orders`)).json()) as { orders: EmulatorOrder[] };
    expect(listed.orders).toEqual(emulator.orders());
    expect(listed.orders[0]?.order).toEqual(created.order);

    const reset = await fetch(`${emulator.url}/_emulator/reset`, { method: "POST" });
    expect(reset.status).toBe(204);
    expect(emulator.orders()).toEqual([]);
    expect(emulator.postCount()).toBe(0);
    expect(emulator.faults.retryAfterSeconds).toBe(1);
    expect(((await (await post()).json()) as OrderBody).order.number).toBe("ORD-000001");
  });

  it("refuses a malformed faults patch", async () => {
    const put = (body: string) =>
      fetch(`${emulator.url}/_emulator/faults`, { method: "PUT", headers: { "content-type": JSON_TYPE }, body });
    await expectError(await put(JSON.stringify({ latencyMs: "slow" })), 400, "BAD_FAULTS");
    await expectError(await put(JSON.stringify({ nonsense: true })), 400, "BAD_FAULTS");
    await expectError(await put("{"), 400, "BAD_JSON");
    expect(emulator.faults.latencyMs).toBe(0);
  });
});

/** The example event in another currency, order and payment alike (the gateway's single-currency rule). */
function inCurrency(currency: string): string {
  const event = JSON.parse(EXAMPLE) as { order: { currency: string }; payment: { currency: string } };
  event.order.currency = currency;
  event.payment.currency = currency;
  return JSON.stringify(event);
}

describe("the agreement's currency (agreementCurrency)", () => {
  it("by default the agreement is in the event's currency: RUB and USD post, XTS (ISO 4217's test code) is refused 422 CURRENCY_MISMATCH", async () => {
    expect((await post(inCurrency("RUB"), { "idempotency-key": "evt-rub" })).status).toBe(201);
    expect((await post(inCurrency("USD"), { "idempotency-key": "evt-usd" })).status).toBe(201);
    const refused = await expectError(
      await post(inCurrency("XTS"), { "idempotency-key": "evt-xts" }),
      422,
      "CURRENCY_MISMATCH",
    );
    expect(refused.error.message).toContain("XTS");
    expect(refused.error.message).toContain("ИнтСайт_Соглашение");
    expect(emulator.orders().map((o) => o.key)).toEqual(["evt-rub", "evt-usd"]);
    expect((await fetch(`${emulator.url}/v1/events/evt-xts`)).status).toBe(404);
  });

  it("set, refuses any other order.currency, storing nothing, until the currencies agree; an ordered key is not checked again", async () => {
    emulator.setFaults({ agreementCurrency: "RUB" });
    const refused = await expectError(await post(inCurrency("USD")), 422, "CURRENCY_MISMATCH");
    expect(refused.error.message).toBe(
      "the site's prices are in USD, but the order's currency is RUB, from its agreement: set ИнтСайт_Соглашение to an agreement in USD",
    );
    expect(emulator.orders()).toHaveLength(0);
    // The refused key holds nothing: the same key is tried anew, not answered 409.
    emulator.setFaults({ agreementCurrency: "USD" });
    expect((await post(inCurrency("USD"))).status).toBe(201);
    emulator.setFaults({ agreementCurrency: "EUR" });
    expect((await post(inCurrency("USD"))).status).toBe(200);
    expect(emulator.orders()).toHaveLength(1);
  });

  it("set to XTS, takes an event in XTS; an event with no currency is refused", async () => {
    emulator.setFaults({ agreementCurrency: "XTS" });
    expect((await post(inCurrency("XTS"), { "idempotency-key": "evt-xts" })).status).toBe(201);
    const bare = JSON.parse(EXAMPLE) as { order: Record<string, unknown> };
    delete bare.order.currency;
    const refused = await expectError(
      await post(JSON.stringify(bare), { "idempotency-key": "evt-none" }),
      422,
      "CURRENCY_MISMATCH",
    );
    expect(refused.error.message).toContain("order.currency");
  });

  it("checks the articles first, as 1C finds them before it fills the order's terms", async () => {
    emulator.setFaults({ agreementCurrency: "RUB", knownSkus: ["TEA-001"] });
    await expectError(await post(inCurrency("USD")), 422, "UNKNOWN_SKU");
    emulator.setFaults({ knownSkus: null });
    await expectError(await post(inCurrency("USD")), 422, "CURRENCY_MISMATCH");
  });

  it("comes before a configured refusal or posting failure: the order never reaches posting", async () => {
    emulator.setFaults({ agreementCurrency: "RUB", orderNotValid: "не проводится", processingError: "сбой" });
    await expectError(await post(inCurrency("USD")), 422, "CURRENCY_MISMATCH");
    expect(emulator.orders()).toHaveLength(0);
  });

  it("is a checked fault of the control endpoint", async () => {
    const put = (body: unknown) =>
      fetch(`${emulator.url}/_emulator/faults`, {
        method: "PUT",
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify(body),
      });
    expect((await put({ agreementCurrency: "KZT" })).status).toBe(200);
    expect(emulator.faults.agreementCurrency).toBe("KZT");
    for (const wrong of ["kzt", "KZ", "RUBL", "", 643]) {
      await expectError(await put({ agreementCurrency: wrong }), 400, "BAD_FAULTS");
    }
    expect(emulator.faults.agreementCurrency).toBe("KZT");
    expect((await put({ agreementCurrency: null })).status).toBe(200);
    expect(emulator.faults.agreementCurrency).toBeNull();
  });
});

describe("concurrency", () => {
  it("creates exactly one order for 20 concurrent POSTs with one key", async () => {
    emulator.setFaults({ latencyMs: 20 });
    const responses = await Promise.all(Array.from({ length: 20 }, () => post()));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as OrderBody[];
    expect(new Set(bodies.map((b) => b.order.id)).size).toBe(1);
    expect(emulator.orders()).toHaveLength(1);
    expect(emulator.postCount()).toBe(20);
  });
});
