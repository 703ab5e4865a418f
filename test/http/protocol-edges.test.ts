import { describe, expect, it } from "vitest";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import {
  type RawAnswer,
  type RawRequest,
  rawBytesExchange,
  rawExchange,
  rawPipelinedExchange,
  rawRequestBytes,
} from "../support/raw-http.ts";

/**
 * The three protocol edges issue 22 found with its hostile-input corpus:
 * - "a pipelined GET of an event right after its POST on the same connection
 *   gets 404; RFC 9112 §9.3.2 allows parallel processing only for safe
 *   methods". Done when "pipelined requests are answered in order with each
 *   seeing the previous one's effect";
 * - "CONNECT drops the socket with no answer";
 * - "an HTTP/0.9-style request line is answered as if it were HTTP/1.1".
 * Both of the last two must "get a problem answer or a clean close, as
 * documented": CONNECT gets 501 (RFC 9110 §9.1: a method the origin server
 * does not implement), a version other than HTTP/1.x gets 505 (RFC 9110
 * §15.6.6, RFC 9112 §2.3), each as RFC 9457 problem+json, then the close.
 */

const SHOP = "token-of-shop-a-0123456789";
const PATH = "/integration/v1/orders/paid";
const PROBLEMS = "/integration/v1/problems/";

const h = gatewayWithEmulator({ SENDER_TOKENS: `shop-a:${SHOP}`, ALLOW_ANONYMOUS: "false", RATE_LIMIT_MAX: "100000" });

/** One request of a pipelined sequence: its correlation id names it in the answer. */
function request(method: "GET" | "POST", target: string, correlationId: string, body?: string | Buffer): RawRequest {
  const headers = [`Authorization: Bearer ${SHOP}`, `X-Correlation-ID: ${correlationId}`];
  return {
    method,
    target,
    headers: body === undefined ? headers : [...headers, "Content-Type: application/json"],
    body,
  };
}

const postOf = (event: OrderPaidEvent, correlationId: string) =>
  request("POST", PATH, correlationId, JSON.stringify(event));
const statusOf = (eventId: string, correlationId: string) =>
  request("GET", `${PATH}/${encodeURIComponent(eventId)}`, correlationId);

/** The requests in one write, each kept alive but the last (Connection: close), so the server closes after answering it. */
function pipelined(requests: readonly RawRequest[]): Buffer {
  return Buffer.concat(requests.map((one, i) => rawRequestBytes({ ...one, keepAlive: i < requests.length - 1 })));
}

const correlationOf = (answer: RawAnswer | undefined) => answer?.headers["x-correlation-id"]?.[0];

function problemOf(answer: RawAnswer): Record<string, unknown> {
  expect(answer.headers["content-type"]?.[0]).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem.correlation_id).toBe(correlationOf(answer));
  return problem;
}

describe("pipelined requests on one connection: answered in order, each seeing the effect of those before it", () => {
  it("a GET of an event pipelined right after its POST sees the event, not 404", async () => {
    const event = orderPaidEvent();
    const answers = await rawPipelinedExchange(
      h.gw.url,
      pipelined([postOf(event, "pipe-post"), statusOf(event.event_id, "pipe-get")]),
    );

    expect(answers.map(correlationOf)).toEqual(["pipe-post", "pipe-get"]);
    const [post, get] = answers as [RawAnswer, RawAnswer];
    expect(post.status, post.body).toBe(201);
    // The status URL answers 200 with the event's status document (README, the status URL).
    expect(get.status, get.body).toBe(200);
    expect(JSON.parse(get.body)).toMatchObject({ event_id: event.event_id, status: "SUCCEEDED" });
  });

  it("a POST pipelined after the same POST is a repeat of the finished first (200, the same bytes), and a GET then sees it", async () => {
    const event = orderPaidEvent();
    // The first body is longer to read (JSON's own whitespace, the same event): the second must still wait for it.
    const padded = request("POST", PATH, "twice-1", `${JSON.stringify(event).slice(0, -1)}${" ".repeat(200 * 1024)}}`);
    const answers = await rawPipelinedExchange(
      h.gw.url,
      pipelined([padded, postOf(event, "twice-2"), statusOf(event.event_id, "twice-get")]),
    );

    expect(answers.map(correlationOf)).toEqual(["twice-1", "twice-2", "twice-get"]);
    const [first, second, get] = answers as [RawAnswer, RawAnswer, RawAnswer];
    // README's answer map: "the first answer goes only to the request that recorded the event".
    expect(first.status, first.body).toBe(201);
    expect(first.headers["idempotent-replayed"]).toEqual(["false"]);
    // 200 is "a repeat of a finished event: the first answer's body, byte for byte".
    expect(second.status, second.body).toBe(200);
    expect(second.headers["idempotent-replayed"]).toEqual(["true"]);
    expect(second.body).toBe(first.body);
    expect(get.status, get.body).toBe(200);
    expect(JSON.parse(get.body)).toMatchObject({ event_id: event.event_id, status: "SUCCEEDED" });
    expect(await h.gw.gateway.register.findByEventId(event.event_id)).toHaveLength(1);
  });

  it("a GET pipelined after a POST whose body is chunked and larger than a socket read sees the event", async () => {
    const event = orderPaidEvent();
    // Whitespace is JSON's own: 200 KiB of it makes the body span many reads and fill the request stream's buffer.
    const json = `${JSON.stringify(event).slice(0, -1)}${" ".repeat(200 * 1024)}}`;
    const chunks = [json.slice(0, 1000), json.slice(1000)]
      .map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`)
      .join("");
    const chunkedPost = Buffer.from(
      `POST ${PATH} HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${SHOP}\r\nX-Correlation-ID: chunked-post\r\n` +
        `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
    );
    const get = rawRequestBytes(statusOf(event.event_id, "after-chunked"));

    const answers = await rawPipelinedExchange(h.gw.url, Buffer.concat([chunkedPost, get]));

    expect(answers.map(correlationOf)).toEqual(["chunked-post", "after-chunked"]);
    expect(answers[0]?.status, answers[0]?.body).toBe(201);
    expect(answers[1]?.status, answers[1]?.body).toBe(200);
    expect(JSON.parse(answers[1]?.body ?? "{}")).toMatchObject({ event_id: event.event_id, status: "SUCCEEDED" });
  });

  it("answers 20 pipelined requests of mixed methods in order, each seeing every earlier one", async () => {
    const events = Array.from({ length: 5 }, () => orderPaidEvent());
    const sequence: { request: RawRequest; status: number; check?: (answer: RawAnswer) => void }[] = [];
    for (const [i, event] of events.entries()) {
      const statusDocument = (status: string) => (answer: RawAnswer) =>
        expect(JSON.parse(answer.body)).toMatchObject({ event_id: event.event_id, status });
      // Before its POST the event is unknown: the order is kept both ways.
      sequence.push({ request: statusOf(event.event_id, `mix-${i}-before`), status: 404 });
      sequence.push({ request: postOf(event, `mix-${i}-post`), status: 201 });
      sequence.push({
        request: statusOf(event.event_id, `mix-${i}-after`),
        status: 200,
        check: statusDocument("SUCCEEDED"),
      });
      sequence.push({
        request: postOf(event, `mix-${i}-repeat`),
        status: 200,
        check: (answer) => expect(answer.headers["idempotent-replayed"]).toEqual(["true"]),
      });
    }
    expect(sequence).toHaveLength(20);

    const answers = await rawPipelinedExchange(h.gw.url, pipelined(sequence.map((step) => step.request)));

    expect(answers.map(correlationOf)).toEqual(
      sequence.map((step) => step.request.headers[1]?.replace("X-Correlation-ID: ", "")),
    );
    for (const [i, step] of sequence.entries()) {
      const answer = answers[i] as RawAnswer;
      expect(answer.status, `${correlationOf(answer)}: ${answer.body}`).toBe(step.status);
      step.check?.(answer);
    }
  });
});

describe("CONNECT: the gateway is no proxy", () => {
  it.each([
    ["an authority-form target", "gateway.test:443"],
    ["an origin-form target", PATH],
  ])("answers 501 problem+json to CONNECT with %s, then closes the connection", async (_name, target) => {
    const raw = await rawBytesExchange(
      h.gw.url,
      Buffer.from(`CONNECT ${target} HTTP/1.1\r\nHost: gateway.test:443\r\nX-Correlation-ID: tunnel-1\r\n\r\n`),
    );
    // rawBytesExchange resolved: the gateway closed the connection after its answer.
    expect(raw.toString("latin1")).toMatch(/^HTTP\/1\.1 501 Not Implemented\r\n/);
    const answer = await rawExchange(
      h.gw.url,
      Buffer.from(`CONNECT ${target} HTTP/1.1\r\nHost: gateway.test:443\r\nX-Correlation-ID: tunnel-2\r\n\r\n`),
    );
    expect(answer.status).toBe(501);
    expect(answer.headers.connection).toEqual(["close"]);
    expect(correlationOf(answer)).toBe("tunnel-2");
    expect(problemOf(answer)).toMatchObject({
      type: `${PROBLEMS}method-not-implemented`,
      status: 501,
      code: "GW_ERR_METHOD_NOT_IMPLEMENTED",
      retryable: false,
    });
  });
});

describe("HTTP versions other than 1.x: 505 problem+json, then the close", () => {
  it.each([
    ["an HTTP/0.9 request line (no version)", "GET /healthz\r\n\r\n", "HTTP/0.9"],
    ["HTTP/2.0 on the HTTP/1 listener", "GET /healthz HTTP/2.0\r\nHost: gateway.test\r\n\r\n", "HTTP/2.0"],
    ["HTTP/2's connection preface (prior knowledge)", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2"],
    ["HTTP/3.0", "GET /healthz HTTP/3.0\r\nHost: gateway.test\r\n\r\n", "version"],
    [
      "HTTP/1.2 (a minor version Node's parser refuses)",
      "GET /healthz HTTP/1.2\r\nHost: gateway.test\r\n\r\n",
      "version",
    ],
  ])("answers 505 to %s", async (_name, bytes, detail) => {
    const raw = await rawBytesExchange(h.gw.url, Buffer.from(bytes, "latin1"));
    expect(raw.toString("latin1")).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
    const answer = await rawExchange(h.gw.url, Buffer.from(bytes, "latin1"));
    expect(answer.status).toBe(505);
    expect(answer.headers.connection).toEqual(["close"]);
    const problem = problemOf(answer);
    expect(problem).toMatchObject({
      type: `${PROBLEMS}http-version-not-supported`,
      status: 505,
      code: "GW_ERR_HTTP_VERSION_NOT_SUPPORTED",
      retryable: false,
    });
    // RFC 9110 §15.6.6: the 505 says what the server does support.
    expect(problem.detail).toContain(detail);
    expect(problem.detail).toContain("HTTP/1.1");

    // HTTP/1.0 is still served.
    const old = await rawExchange(h.gw.url, Buffer.from("GET /healthz HTTP/1.0\r\n\r\n", "latin1"));
    expect(old.status).toBe(200);
  });
});
