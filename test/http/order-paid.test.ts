import { afterEach, describe, expect, it } from "vitest";
import { exampleEvent, orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { ordersOf } from "../support/orders.ts";

// The breaker is kept out of the way here (BREAKER_FAILURES): its own tests are in test/delivery.
const h = gatewayWithEmulator({
  SYNC_WAIT_MS: "3000",
  RETRY_BASE_MS: "20",
  DELIVERY_POLL_MS: "20",
  BREAKER_FAILURES: "1000",
});
afterEach(() => h.onec.setFaults({ latencyMs: 0, unavailable: false, knownSkus: null, hangAfterCommit: false }));

function statusOf(eventId: string) {
  return call(`${h.gw.url}/integration/v1/orders/paid/${encodeURIComponent(eventId)}`);
}

describe("POST /integration/v1/orders/paid: first answer and replay", () => {
  it("answers 201 with the order, then 200 with the same bytes, marked as a replay", async () => {
    const event = orderPaidEvent();
    const first = await postEvent(h.gw.url, event, { "x-correlation-id": "shop-42" });
    expect(first.status).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBe("false");
    expect(first.headers["x-correlation-id"]).toBe("shop-42");
    expect(first.headers["content-type"]).toMatch(/^application\/json/);
    const body = first.json();
    const statusUrl = `/integration/v1/orders/paid/${event.event_id}`;
    expect(first.headers.location).toBe(statusUrl);
    expect(body).toEqual({
      event_id: event.event_id,
      status: "SUCCEEDED",
      order: { id: expect.any(String), number: expect.stringMatching(/^ORD-/) },
      status_url: statusUrl,
    });

    const repeat = await postEvent(h.gw.url, event, { "x-correlation-id": "shop-43" });
    expect(repeat.status).toBe(200);
    expect(repeat.headers["idempotent-replayed"]).toBe("true");
    expect(repeat.headers["x-correlation-id"]).toBe("shop-43");
    expect(repeat.text).toBe(first.text);
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });

  it("treats another key order and whitespace as the same event", async () => {
    const event = orderPaidEvent();
    const first = await postEvent(h.gw.url, event);
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(event).reverse()), null, 4);
    const repeat = await postEvent(h.gw.url, reordered);
    expect([first.status, repeat.status]).toEqual([201, 200]);
    expect(repeat.text).toBe(first.text);
  });

  it("accepts the IETF Idempotency-Key header when it equals event_id, bare or quoted", async () => {
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event, { "idempotency-key": event.event_id })).status).toBe(201);
    expect((await postEvent(h.gw.url, event, { "idempotency-key": `"${event.event_id}"` })).status).toBe(200);
  });

  it("sends 1C the canonical bytes with the key, correlation id and content type", async () => {
    const event = orderPaidEvent();
    const posted = new Promise<{ key: string; correlationId: string }>((resolve) =>
      h.onec.events.on("post", function onPost(p: { key: string; correlationId: string }) {
        if (p.key === event.event_id) {
          h.onec.events.off("post", onPost);
          resolve(p);
        }
      }),
    );
    await postEvent(h.gw.url, event, { "x-correlation-id": "corr-fwd-1" });
    expect(await posted).toEqual({ key: event.event_id, correlationId: "corr-fwd-1" });
  });
});

describe("conflicts and in-flight events", () => {
  it("answers 409 for the same event_id with another body, and records nothing new", async () => {
    const event = orderPaidEvent();
    await postEvent(h.gw.url, event);
    const changed = structuredClone(event);
    changed.order.customer.name = "Someone Else";
    const conflict = await postEvent(h.gw.url, changed, { "x-correlation-id": "c-409" });
    expect(conflict.status).toBe(409);
    expect(conflict.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(conflict.json()).toMatchObject({
      type: "/integration/v1/problems/event-id-conflict",
      status: 409,
      code: "GW_ERR_EVENT_ID_CONFLICT",
      correlation_id: "c-409",
      event_id: event.event_id,
    });
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });

  it("answers 202 while 1C is slow, and 409 (not 202) for another body meanwhile", async () => {
    const slow = await startTestGateway({ ONEC_URL: h.onec.url, SYNC_WAIT_MS: "100" });
    // The emulator is the file's: its count only grows, so this test's POSTs are the difference.
    const postsBefore = h.onec.postCount();
    const event = orderPaidEvent();
    try {
      h.onec.setFaults({ latencyMs: 1500 });
      const first = await postEvent(slow.url, event);
      expect(first.status).toBe(202);
      expect(first.headers.location).toBe(`/integration/v1/orders/paid/${event.event_id}`);
      expect(Number(first.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(first.json()).toEqual({
        event_id: event.event_id,
        status: "PROCESSING",
        status_url: first.headers.location,
      });

      const again = await postEvent(slow.url, event);
      expect(again.status).toBe(202);
      const other = structuredClone(event);
      other.payment.id = "pay_other";
      expect((await postEvent(slow.url, other)).status).toBe(409);
    } finally {
      await slow.close();
    }
    // close() waited for the attempt; it must have written the order, once: neither the repeat nor
    // the other body made a second POST.
    expect(h.onec.postCount() - postsBefore).toBe(1);
    expect(ordersOf(h.onec, event.event_id)).toBe(1);
  });

  it("answers 202 at once with SYNC_WAIT_MS=0 and delivers in the background", async () => {
    const eager = await startTestGateway({ ONEC_URL: h.onec.url, SYNC_WAIT_MS: "0" });
    try {
      const event = orderPaidEvent();
      const committed = new Promise<void>((resolve) =>
        h.onec.events.on("committed", (o: { key: string }) => o.key === event.event_id && resolve()),
      );
      expect((await postEvent(eager.url, event)).status).toBe(202);
      await committed;
      await eager.gateway.deliverer.idle();
      const status = await call(`${eager.url}/integration/v1/orders/paid/${event.event_id}`);
      expect(status.json()).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
      const replay = await postEvent(eager.url, event);
      expect([replay.status, replay.headers["idempotent-replayed"]]).toEqual([200, "true"]);
    } finally {
      await eager.close();
    }
  });

  it("gives 50 concurrent requests with one new event_id one order, the same for all", async () => {
    h.onec.setFaults({ latencyMs: 300 });
    const event = orderPaidEvent();
    const answers = await Promise.all(Array.from({ length: 50 }, () => postEvent(h.gw.url, event)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });
});

describe("1C outcomes", () => {
  it("answers 422 when 1C refuses the order, and replays that 422", async () => {
    h.onec.setFaults({ knownSkus: ["TEA-001"] });
    const event = orderPaidEvent();
    const first = await postEvent(h.gw.url, event);
    expect(first.status).toBe(422);
    expect(first.json()).toMatchObject({
      type: "/integration/v1/problems/onec-rejected",
      onec_error: { code: "UNKNOWN_SKU" },
      event_id: event.event_id,
    });
    expect(first.headers["idempotent-replayed"]).toBe("false");
    h.onec.setFaults({ knownSkus: null });
    const repeat = await postEvent(h.gw.url, event);
    expect([repeat.status, repeat.headers["idempotent-replayed"], repeat.text]).toEqual([422, "true", first.text]);
    expect((await statusOf(event.event_id)).json()).toMatchObject({ status: "FAILED_FINAL" });
  });

  it("ends as FAILED_FINAL (422) when 1C holds the key with another body (1C 409)", async () => {
    const event = orderPaidEvent();
    const elsewhere = await call(`${h.onec.url}/v1/orders/paid`, {
      method: "POST",
      body: JSON.stringify({ ...event, note: "sent by someone else" }),
      headers: { "content-type": "application/json", "idempotency-key": event.event_id },
    });
    expect(elsewhere.status).toBe(201);
    const answer = await postEvent(h.gw.url, event);
    expect(answer.status).toBe(422);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/onec-conflict" });
    expect((await statusOf(event.event_id)).json()).toMatchObject({ status: "FAILED_FINAL" });
  });

  it("answers 202 while 1C is down, then delivers once by itself after 1C returns", async () => {
    h.onec.setFaults({ unavailable: true, retryAfterSeconds: 0 });
    const event = orderPaidEvent();
    const first = await postEvent(h.gw.url, event);
    expect(first.status).toBe(202);
    const pending = (await statusOf(event.event_id)).json();
    expect(pending).toMatchObject({ status: "FAILED_RETRYABLE", order: null, error_class: "http_503" });
    expect(String(pending.error)).toMatch(/503/);
    expect(Date.parse(String(pending.next_attempt_at))).toBeGreaterThan(Date.parse(String(pending.updated_at)) - 1);

    const committed = new Promise<void>((resolve) =>
      h.onec.events.on("committed", (o: { key: string }) => o.key === event.event_id && resolve()),
    );
    h.onec.setFaults({ unavailable: false });
    await committed;
    await h.gw.gateway.deliverer.idle();
    const done = (await statusOf(event.event_id)).json();
    expect(done).toMatchObject({ status: "SUCCEEDED", error: null });
    expect(Number(done.attempts)).toBeGreaterThanOrEqual(2);
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);

    const repeat = await postEvent(h.gw.url, event);
    expect([repeat.status, repeat.headers["idempotent-replayed"]]).toEqual([200, "true"]);
    const attempts = (await call(`${h.gw.url}/integration/v1/orders/paid/${event.event_id}/attempts`)).json();
    const outcomes = (attempts.attempts as Array<{ outcome: string; http_status: number }>).map((a) => a.outcome);
    expect(outcomes.at(-1)).toBe("delivered");
    expect(outcomes.slice(0, -1).every((o) => o === "retryable")).toBe(true);
  });
});

describe("refused before recording", () => {
  const path = "/integration/v1/orders/paid";

  async function expectProblem(
    answer: Awaited<ReturnType<typeof postEvent>>,
    status: number,
    slug: string,
  ): Promise<Record<string, unknown>> {
    expect(answer.status).toBe(status);
    expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const problem = answer.json();
    expect(problem).toMatchObject({ type: `/integration/v1/problems/${slug}`, status });
    expect(problem.title).toEqual(expect.any(String));
    expect(problem.detail).toEqual(expect.any(String));
    expect(problem.correlation_id).toBe(answer.headers["x-correlation-id"]);
    return problem;
  }

  it("400 for unparseable JSON", async () => {
    await expectProblem(await postEvent(h.gw.url, '{"event_id": "x",'), 400, "invalid-json");
    await expectProblem(await postEvent(h.gw.url, ""), 400, "invalid-json");
  });

  it("400 for a repeated key, which JSON.parse would hide", async () => {
    const event = orderPaidEvent();
    const text = JSON.stringify(event).replace(
      '"payment":',
      '"payment":{"id":"a","amount":"1.00","currency":"RUB"},"payment":',
    );
    await expectProblem(await postEvent(h.gw.url, text), 400, "duplicate-json-key");
    expect((await statusOf(event.event_id)).status).toBe(404);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["a number", 42],
    ["with a space", "evt 1"],
    ["too long", "e".repeat(129)],
  ])("400 for an event_id %s", async (_name, eventId) => {
    const event = orderPaidEvent() as unknown as Record<string, unknown>;
    if (eventId === undefined) delete event.event_id;
    else event.event_id = eventId;
    await expectProblem(await postEvent(h.gw.url, event), 400, "invalid-event-id");
  });

  it("400 for a body that is not an object", async () => {
    await expectProblem(await postEvent(h.gw.url, "[1,2]"), 400, "invalid-event-id");
  });

  it("400 when Idempotency-Key differs from event_id", async () => {
    const event = orderPaidEvent();
    await expectProblem(
      await postEvent(h.gw.url, event, { "idempotency-key": "other" }),
      400,
      "idempotency-key-mismatch",
    );
  });

  it("413 for a body over BODY_LIMIT", async () => {
    const event = orderPaidEvent((e) => {
      e.order.customer.name = "x".repeat(300 * 1024);
    });
    await expectProblem(await postEvent(h.gw.url, event), 413, "body-too-large");
  });

  it("415 for a body that is not JSON, or no body at all", async () => {
    const xml = await call(`${h.gw.url}${path}`, {
      method: "POST",
      body: "<order/>",
      headers: { "content-type": "application/xml" },
    });
    await expectProblem(xml, 415, "unsupported-media-type");
    await expectProblem(await call(`${h.gw.url}${path}`, { method: "POST" }), 415, "unsupported-media-type");
  });

  it("422 listing every schema violation, money as a number included, with no coercion", async () => {
    const event = orderPaidEvent() as unknown as { order: Record<string, unknown>; payment: Record<string, unknown> };
    event.order.total = 1890;
    event.payment.amount = "1890";
    event.order.unexpected = true;
    const problem = await expectProblem(await postEvent(h.gw.url, event), 422, "schema-violation");
    const paths = (problem.errors as Array<{ path: string }>).map((e) => e.path).sort();
    expect(paths).toEqual(["/order/total", "/order/unexpected", "/payment/amount"]);
  });

  it("422 listing every business rule broken, and nothing recorded", async () => {
    const event = orderPaidEvent((e) => {
      e.order.total = "1.00";
      e.payment.currency = "USD";
    });
    const problem = await expectProblem(await postEvent(h.gw.url, event), 422, "business-rules-violated");
    expect((problem.errors as Array<{ rule: string }>).map((e) => e.rule)).toEqual([
      "total-equals-items-plus-delivery",
      "payment-equals-total",
      "single-currency",
    ]);
    expect((await statusOf(event.event_id)).status).toBe(404);
  });

  it("422 no-nul-character for U+0000 in any string or member name, nothing recorded (PostgreSQL cannot store it: a 500 retried forever before)", async () => {
    const event = orderPaidEvent((e) => {
      e.order.customer.name = "Anna\u0000Smith";
    });
    const text = JSON.stringify(event).replace('"order":{', '"order":{"x\\u0000y":1,');
    const problem = await expectProblem(await postEvent(h.gw.url, text), 422, "schema-violation");
    const nul = (problem.errors as Array<{ path: string; rule: string }>).filter((e) => e.rule === "no-nul-character");
    expect(nul.map((e) => e.path).sort()).toEqual(["/order/customer/name", "/order/x\u0000y"]);
    expect((await statusOf(event.event_id)).status).toBe(404);
  });

  it("422 date-within-1c-range (issue 20: 1C refuses it the same way) for an event dated in year 4000, nothing recorded, nothing sent to 1C", async () => {
    const posts = h.onec.postCount();
    const event = orderPaidEvent((e) => {
      e.occurred_at = "4000-01-01T00:00:00Z";
    });
    const problem = await expectProblem(await postEvent(h.gw.url, event), 422, "business-rules-violated");
    expect(problem.errors).toEqual([
      { path: "/occurred_at", rule: "date-within-1c-range", message: expect.stringContaining("3999") },
    ]);
    expect((await statusOf(event.event_id)).status).toBe(404);
    expect(h.onec.postCount()).toBe(posts);
  });

  describe("dates: RFC 3339 only, as 1C reads them", () => {
    // RFC 3339 §5.6: date-time = full-date "T" full-time; time-offset = "Z" / time-numoffset ("+" / "-" HH ":" MM);
    // "T" and "Z" may be lower case (§5.6 NOTE). The extension's РазборДатыISO reads exactly that and answers
    // 400 BAD_EVENT, a final refusal, to anything else: ajv-formats' date-time also lets through a space for
    // "T" and an offset without its colon, so such events were accepted here and lost in 1C.
    it.each([
      ["a space for T", "2026-11-29 12:34:56Z"],
      ["an offset without its colon", "2026-11-29T15:34:56+0300"],
      ["an offset of hours only", "2026-11-29T15:34:56+03"],
      ["no offset", "2026-11-29T12:34:56"],
    ])("422 schema-violation for %s, nothing recorded, nothing sent to 1C", async (_, stamp) => {
      const posts = h.onec.postCount();
      const event = orderPaidEvent((e) => {
        e.payment.paid_at = stamp;
      });
      const problem = await expectProblem(await postEvent(h.gw.url, event), 422, "schema-violation");
      expect((problem.errors as Array<{ path: string }>).map((e) => e.path)).toContain("/payment/paid_at");
      expect((await statusOf(event.event_id)).status).toBe(404);
      expect(h.onec.postCount()).toBe(posts);
    });

    it.each([
      ["Z", "2026-11-29T12:34:56Z"],
      ["fractions and an offset", "2026-11-29T15:34:56.123+03:00"],
      ["a negative offset", "2026-11-29T07:34:56-05:00"],
      ["lower-case t and z", "2026-11-29t12:34:56z"],
    ])("201 for %s", async (_, stamp) => {
      const event = orderPaidEvent((e) => {
        e.payment.paid_at = stamp;
      });
      expect((await postEvent(h.gw.url, event)).status).toBe(201);
    });
  });
});

describe("status URL, health, correlation", () => {
  it("shows the event's state", async () => {
    const event = orderPaidEvent();
    const created = await postEvent(h.gw.url, event, { "x-correlation-id": "status-1" });
    const status = await call(`${h.gw.url}${created.headers.location}`);
    expect(status.status).toBe(200);
    expect(status.json()).toEqual({
      event_id: event.event_id,
      status: "SUCCEEDED",
      attempts: 1,
      order: created.json().order,
      error: null,
      error_class: null,
      next_attempt_at: null,
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      correlation_id: "status-1",
    });
  });

  it("answers 404 problems for an unknown event and an unknown route, with the correlation id", async () => {
    const unknown = await statusOf("never-sent");
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({
      type: "/integration/v1/problems/not-found",
      correlation_id: unknown.headers["x-correlation-id"],
    });
    const route = await call(`${h.gw.url}/nope`, { headers: { "x-correlation-id": "lost-1" } });
    expect([route.status, route.headers["x-correlation-id"], route.json().correlation_id]).toEqual([
      404,
      "lost-1",
      "lost-1",
    ]);
  });

  it("replaces an unsafe correlation id with a UUIDv7 of the request's time", async () => {
    for (const bad of ["has space", "x".repeat(129), '{"json":1}']) {
      const before = Date.now();
      const answer = await call(`${h.gw.url}/healthz`, { headers: { "x-correlation-id": bad } });
      const made = String(answer.headers["x-correlation-id"]);
      // RFC 9562 §5.7: version 7, variant 10, the first 48 bits Unix time in milliseconds.
      expect(made).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const madeAt = Number.parseInt(made.replace("-", "").slice(0, 12), 16);
      expect(madeAt).toBeGreaterThanOrEqual(before);
      expect(madeAt).toBeLessThanOrEqual(Date.now());
    }
  });

  it("writes the correlation id on every log line of a request", async () => {
    const event = orderPaidEvent();
    const before = h.gw.logs.length;
    await postEvent(h.gw.url, event, { "x-correlation-id": "log-check-1" });
    const lines = h.gw.logs
      .slice(before)
      .filter((l) => l.correlation_id === "log-check-1" || l.event_id === event.event_id);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["1C answered", "request completed"]));
    expect(lines.find((l) => l.msg === "request completed")).toMatchObject({
      sender: "default",
      event_id: event.event_id,
      event_status: "SUCCEEDED",
      status: 201,
      duration_ms: expect.any(Number),
    });
    expect(lines.every((l) => l.correlation_id === "log-check-1")).toBe(true);
  });

  it("answers /healthz 200 and the example event validates", async () => {
    expect((await call(`${h.gw.url}/healthz`)).status).toBe(200);
    expect((await postEvent(h.gw.url, exampleEvent())).status).toBeLessThan(300);
  });
});

describe("storage unavailable", () => {
  it("answers 503 with Retry-After and records nothing when the register cannot write", async () => {
    const broken = await startTestGateway({ ONEC_URL: h.onec.url });
    try {
      await broken.gateway.register.close();
      const answer = await postEvent(broken.url, orderPaidEvent());
      expect(answer.status).toBe(503);
      expect(answer.headers["retry-after"]).toBe("2");
      expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/storage-unavailable", retryable: true });
    } finally {
      await broken.close();
    }
  });
});
