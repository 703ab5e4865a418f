import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";

const h = gatewayWithEmulator({ REQUEST_TIMEOUT_MS: "400" });

/** Writes raw bytes on a fresh socket and collects everything the gateway sends until it closes. */
function rawExchange(payload: string): Promise<string> {
  const { port } = new URL(h.gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(payload));
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
    });
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

function problemOf(raw: string): { status: number; body: Record<string, unknown>; head: string } {
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), head, body: JSON.parse(body) };
}

describe("hostile and clumsy senders", () => {
  it("answers 408 problem+json to a body that stops arriving (slowloris), with the sender's correlation id", async () => {
    const started = Date.now();
    const raw = await rawExchange(
      'POST /integration/v1/orders/paid HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Correlation-ID: slow-1\r\nContent-Length: 1000\r\n\r\n{"event_id":',
    );
    const problem = problemOf(raw);
    expect(problem.status).toBe(408);
    expect(problem.head).toMatch(/content-type: application\/problem\+json/i);
    // docs/api.md: X-Correlation-ID is echoed on every answer.
    expect(problem.head).toMatch(/\r\nx-correlation-id: slow-1\r\n/i);
    expect(problem.body).toMatchObject({
      type: "/integration/v1/problems/request-timeout",
      retryable: true,
      correlation_id: "slow-1",
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("gives a 408 on a kept-alive connection a new id, not the finished request's, when the next headers stop arriving", async () => {
    const first = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Correlation-ID: done-1\r\n\r\n";
    const raw = await rawExchange(`${first}POST /integration/v1/orders/paid HTTP/1.1\r\nHost: x\r\n`);
    const answers = raw.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((answer) => Number(answer.split(" ")[1]))).toEqual([200, 408]);
    expect(answers[1]).not.toMatch(/x-correlation-id: done-1/i);
    expect(answers[1]).toMatch(/x-correlation-id: [0-9a-f-]{36}/i);
  });

  it("names the limit a body is over: 413 at one byte past README's BODY_LIMIT default (262144)", async () => {
    const event = JSON.stringify(orderPaidEvent());
    const padded = (size: number) =>
      `${event.slice(0, -1)},"padding":"${"x".repeat(size - Buffer.byteLength(event) - 13)}"}`;
    expect(Buffer.byteLength(padded(262_145))).toBe(262_145);
    const answer = await postEvent(h.gw.url, padded(262_145));
    expect(answer.status).toBe(413);
    expect(answer.json()).toMatchObject({
      type: "/integration/v1/problems/body-too-large",
      detail: "the body is larger than this route's limit of 262144 bytes; nothing was recorded",
    });
    expect((await postEvent(h.gw.url, padded(262_144))).status).not.toBe(413);
  });

  it("answers 400 problem+json to bytes that are not HTTP", async () => {
    const problem = problemOf(await rawExchange("HELLO 1C\r\n\r\n"));
    expect(problem.status).toBe(400);
    expect(problem.body).toMatchObject({ type: "/integration/v1/problems/bad-request" });
    expect(problem.head).toMatch(/x-correlation-id: [0-9a-f-]{36}/i);
  });

  it("answers 431 problem+json to oversized headers", async () => {
    const answer = await call(`${h.gw.url}/healthz`, { headers: { "x-big": "b".repeat(20_000) } });
    expect(answer.status).toBe(431);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/headers-too-large" });
  });

  it("refuses 100 000 levels of nesting without a 500", async () => {
    const event = orderPaidEvent();
    const deep = `${JSON.stringify(event).slice(0, -1)},"extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const answer = await postEvent(h.gw.url, deep);
    expect([400, 413, 422]).toContain(answer.status);
    expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("refuses wrong types without coercing them", async () => {
    const event = orderPaidEvent() as unknown as { order: { items: Array<Record<string, unknown>> } };
    (event.order.items[0] as Record<string, unknown>).quantity = "2";
    (event.order.items[1] as Record<string, unknown>).quantity = true;
    const answer = await postEvent(h.gw.url, event);
    expect(answer.status).toBe(422);
    const paths = (answer.json().errors as Array<{ path: string }>).map((e) => e.path);
    expect(paths).toEqual(["/order/items/0/quantity", "/order/items/1/quantity"]);
  });

  it("refuses a prototype-poisoning key as an unknown property", async () => {
    const text = JSON.stringify(orderPaidEvent()).replace('"order":{', '"order":{"__proto__":{"admin":true},');
    const answer = await postEvent(h.gw.url, text);
    expect([400, 422]).toContain(answer.status);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
