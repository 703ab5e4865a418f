/**
 * OnecClient: the one POST to 1C and the outcome it comes to.
 *
 * Two kinds of tests live here:
 * - With an undici MockAgent injected as `dispatcher`: what 1C receives and how each answer is classified.
 *   msw cannot be used for this: it patches global fetch and node:http, while OnecClient calls `undici.request`
 *   (see the transport guard at the bottom).
 * - Against a real node:http server on 127.0.0.1:0 with the client's own Agent: deadlines, resets, refused
 *   connections and oversized answers, which MockAgent does not emulate.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { HttpResponse, http as mswHttp } from "msw";
import { setupServer } from "msw/node";
import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OnecClient, type OnecClientOptions, type OrderPaidDelivery } from "../../src/onec/client.ts";

const ORIGIN = "http://1c.test";
/** Trailing slash on purpose: the client must trim it. */
const BASE_URL = `${ORIGIN}/base/hs/integration/`;
const PATH = "/base/hs/integration/v1/orders/paid";
const JSON_TYPE = { "content-type": "application/json; charset=utf-8" };
const ORDER = { id: "3f1b6c2e-8a4d-4f0e-9b7a-1c2d3e4f5a6b", number: "ORD-000123" };

function delivery(overrides: Partial<OrderPaidDelivery> = {}): OrderPaidDelivery {
  return {
    idempotencyKey: "shop-a:evt-42",
    // Non-ASCII and odd spacing: the bytes must reach 1C untouched, not re-serialized.
    body: '{"event_id":"evt-42", "amount":"1500.00","comment":"Чай «Цейлон» ✓"}',
    correlationId: "corr-7f3a9c",
    ...overrides,
  };
}

describe("OnecClient with a MockAgent", () => {
  let mockAgent: MockAgent;

  beforeEach(() => {
    mockAgent = new MockAgent();
    mockAgent.disableNetConnect();
  });

  afterEach(async () => {
    try {
      mockAgent.assertNoPendingInterceptors();
    } finally {
      await mockAgent.close();
    }
  });

  function mockedClient(options: Partial<OnecClientOptions> = {}): OnecClient {
    return new OnecClient({ baseUrl: BASE_URL, timeoutMs: 5_000, dispatcher: mockAgent, ...options });
  }

  interface SeenRequest {
    method?: string;
    path?: string;
    body?: string;
    headers?: Record<string, string>;
  }

  /** Accepts any request on ORIGIN and records what it looked like; the test asserts the values. */
  function interceptRecording(seen: SeenRequest) {
    return mockAgent.get(ORIGIN).intercept({
      path: (path) => {
        seen.path = path;
        return true;
      },
      method: (method) => {
        seen.method = method;
        return true;
      },
      body: (body) => {
        seen.body = body;
        return true;
      },
      headers: (headers) => {
        seen.headers = headers;
        return true;
      },
    });
  }

  function interceptOrderPaid() {
    return mockAgent.get(ORIGIN).intercept({ path: PATH, method: "POST" });
  }

  describe("the request 1C receives", () => {
    it("is a POST of the exact body to <baseUrl>/v1/orders/paid with correlation, key and Basic auth", async () => {
      const seen: SeenRequest = {};
      interceptRecording(seen).reply(201, { order: ORDER }, { headers: JSON_TYPE });
      const sent = delivery();

      const outcome = await mockedClient({ user: "gateway", password: "s3cret" }).sendOrderPaid(sent);

      expect(outcome.kind).toBe("delivered");
      expect(seen.method).toBe("POST");
      expect(seen.path).toBe(PATH);
      expect(seen.body).toBe(sent.body);
      expect(seen.headers).toMatchObject({
        "content-type": "application/json; charset=utf-8",
        accept: "application/json",
        "x-correlation-id": "corr-7f3a9c",
        "idempotency-key": "shop-a:evt-42",
        authorization: "Basic Z2F0ZXdheTpzM2NyZXQ=", // base64("gateway:s3cret")
      });
    });

    it.each([
      ["no user", {}],
      ["an empty user", { user: "", password: "ignored" }],
    ])("carries no authorization header with %s", async (_label, credentials) => {
      const seen: SeenRequest = {};
      interceptRecording(seen).reply(201, { order: ORDER }, { headers: JSON_TYPE });

      await mockedClient(credentials).sendOrderPaid(delivery());

      expect(seen.headers).toBeDefined();
      expect(seen.headers).not.toHaveProperty("authorization");
      expect(seen.headers).toHaveProperty("idempotency-key", "shop-a:evt-42");
    });

    it("sends the same key and bytes again when called again (the caller's retries are safe)", async () => {
      const bodies: string[] = [];
      const keys: string[] = [];
      mockAgent
        .get(ORIGIN)
        .intercept({
          path: PATH,
          method: "POST",
          body: (body) => {
            bodies.push(body);
            return true;
          },
          headers: (headers) => {
            keys.push(headers["idempotency-key"] ?? "");
            return true;
          },
        })
        .reply(503, "busy")
        .times(2);
      const client = mockedClient();
      const sent = delivery();

      await client.sendOrderPaid(sent);
      await client.sendOrderPaid(sent);

      expect(new Set(bodies)).toEqual(new Set([sent.body]));
      expect(new Set(keys)).toEqual(new Set([sent.idempotencyKey]));
    });
  });

  describe("1C's answer", () => {
    it.each([201, 200] as const)("%i with {order:{id,number}} is delivered", async (status) => {
      interceptOrderPaid().reply(status, { order: ORDER }, { headers: JSON_TYPE });

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toEqual({ kind: "delivered", httpStatus: status, order: ORDER });
    });

    it("422 is a final rejection with 1C's code and message", async () => {
      interceptOrderPaid().reply(
        422,
        { error: { code: "UNKNOWN_SKU", message: "unknown article TEA-9" } },
        { headers: JSON_TYPE },
      );

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toEqual({
        kind: "rejected",
        httpStatus: 422,
        code: "UNKNOWN_SKU",
        message: "unknown article TEA-9",
      });
    });

    it("409 is a conflict", async () => {
      interceptOrderPaid().reply(
        409,
        { error: { code: "IDEMPOTENCY_KEY_REUSED", message: "key holds another body" } },
        { headers: JSON_TYPE },
      );

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toEqual({ kind: "conflict", httpStatus: 409, message: "key holds another body" });
    });

    it("401 is unauthorized", async () => {
      interceptOrderPaid().reply(401, "", { headers: { "www-authenticate": 'Basic realm="1C"' } });

      const outcome = await mockedClient({ user: "gateway", password: "wrong" }).sendOrderPaid(delivery());

      expect(outcome).toMatchObject({ kind: "unauthorized", httpStatus: 401 });
    });

    it("503 with Retry-After: 5 is retryable after 5000 ms", async () => {
      interceptOrderPaid().reply(503, "maintenance", { headers: { "retry-after": "5" } });

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toMatchObject({ kind: "retryable", httpStatus: 503, errorClass: "http_503", retryAfterMs: 5000 });
    });

    it("500 with an HTML page is retryable http_500", async () => {
      interceptOrderPaid().reply(500, "<html><body><h1>Internal Server Error</h1></body></html>", {
        headers: { "content-type": "text/html" },
      });

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toMatchObject({ kind: "retryable", httpStatus: 500, errorClass: "http_500" });
      expect(outcome).not.toHaveProperty("retryAfterMs");
    });

    it.each([
      ["{}", "{}"],
      ["plain text", "Created"],
      ["an order without a number", JSON.stringify({ order: { id: ORDER.id } })],
      ["an order with numeric fields", JSON.stringify({ order: { id: 1, number: 2 } })],
    ])("201 with %s is retryable bad_answer, never delivered", async (_label, body) => {
      interceptOrderPaid().reply(201, body, { headers: JSON_TYPE });

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toMatchObject({ kind: "retryable", httpStatus: 201, errorClass: "bad_answer" });
    });
  });

  describe("network failures", () => {
    it("ECONNRESET is retryable with errorClass ECONNRESET", async () => {
      interceptOrderPaid().replyWithError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));

      const outcome = await mockedClient().sendOrderPaid(delivery());

      expect(outcome).toMatchObject({ kind: "retryable", errorClass: "ECONNRESET" });
      expect(outcome).not.toHaveProperty("httpStatus");
    });
  });

  it("close() leaves an injected dispatcher open: the caller owns it", async () => {
    interceptOrderPaid().reply(201, { order: ORDER }, { headers: JSON_TYPE });
    const client = mockedClient();

    await client.close();
    const outcome = await client.sendOrderPaid(delivery());

    expect(outcome.kind).toBe("delivered");
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Real sockets: a node:http server on 127.0.0.1:0, no dispatcher injected (the client's own Agent is used).
// ---------------------------------------------------------------------------------------------------------------

interface RunningServer {
  server: Server;
  baseUrl: string;
  sockets: Set<Socket>;
}

const servers: RunningServer[] = [];
const clients: OnecClient[] = [];

async function startServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<RunningServer> {
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => sockets.add(socket));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const running = { server, baseUrl: `http://127.0.0.1:${port}/base/`, sockets };
  servers.push(running);
  return running;
}

async function stopServer({ server }: RunningServer): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

function realClient(baseUrl: string, options: Partial<OnecClientOptions> = {}): OnecClient {
  const client = new OnecClient({ baseUrl, timeoutMs: 2_000, ...options });
  clients.push(client);
  return client;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

afterEach(async () => {
  // Servers first: dropping their connections ends anything still in flight, so the clients' close() cannot hang.
  await Promise.all(servers.splice(0).map(stopServer));
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

describe("OnecClient over a real socket", () => {
  it("puts the exact UTF-8 bytes on the wire and reads the order back", async () => {
    const sent = delivery();
    let received: { method?: string; url?: string; headers: IncomingMessage["headers"]; body: Buffer } | undefined;
    const { baseUrl } = await startServer(async (req, res) => {
      received = { method: req.method, url: req.url, headers: req.headers, body: await readBody(req) };
      res.writeHead(201, JSON_TYPE).end(JSON.stringify({ order: ORDER }));
    });

    const outcome = await realClient(baseUrl).sendOrderPaid(sent);

    expect(outcome).toEqual({ kind: "delivered", httpStatus: 201, order: ORDER });
    expect(received?.method).toBe("POST");
    expect(received?.url).toBe("/base/v1/orders/paid");
    expect(received?.body.equals(Buffer.from(sent.body, "utf8"))).toBe(true);
    expect(received?.headers["content-length"]).toBe(String(Buffer.byteLength(sent.body, "utf8")));
    expect(received?.headers["idempotency-key"]).toBe(sent.idempotencyKey);
    expect(received?.headers["x-correlation-id"]).toBe(sent.correlationId);
  });

  it("asks GET /v1/events/{key} with the key in the path as it is: no %-escape for ~ or :", async () => {
    let url: string | undefined;
    const { baseUrl } = await startServer(async (req, res) => {
      url = req.url;
      await readBody(req);
      res.writeHead(200, JSON_TYPE).end(JSON.stringify({ order: ORDER }));
    });
    const found = await realClient(baseUrl).lookUpEvent("shop-a~evt:42.x_y-z", "corr-lookup");
    expect(found).toEqual({ kind: "found", httpStatus: 200, order: ORDER });
    expect(url).toBe("/base/v1/events/shop-a~evt:42.x_y-z");
    // A key outside the alphabet (never made by the gateway) still makes a well-formed URL.
    await realClient(baseUrl).lookUpEvent("a/b c", "corr-lookup-2");
    expect(url).toBe("/base/v1/events/a%2Fb%20c");
  });

  it("a server that accepts the request and never answers is a retryable timeout, on our deadline", async () => {
    const { server, baseUrl } = await startServer(() => {
      // Hold the request open: no status line, no headers, ever.
    });
    const arrived = once(server, "request");
    const client = realClient(baseUrl, { timeoutMs: 300 });

    const started = performance.now();
    const outcome = await client.sendOrderPaid(delivery());
    const elapsed = performance.now() - started;
    await arrived; // the request did reach the server: this is an answer timeout, not a connect failure

    expect(outcome).toMatchObject({ kind: "retryable", errorClass: "timeout" });
    expect(outcome).not.toHaveProperty("httpStatus");
    // The AbortSignal fired, not one of undici's coarse (~1 s granularity) timers.
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(900);
  });

  it("a server that drops the connection mid-request is retryable with the socket error's code", async () => {
    const { baseUrl } = await startServer((req) => {
      req.socket.destroy();
    });

    const outcome = await realClient(baseUrl).sendOrderPaid(delivery());

    expect(outcome.kind).toBe("retryable");
    if (outcome.kind !== "retryable") return;
    expect(outcome.httpStatus).toBeUndefined();
    expect(outcome.errorClass).toMatch(/^[A-Z_]+$/); // a code such as UND_ERR_SOCKET, ECONNRESET or EPIPE
    expect(outcome.errorClass).not.toBe("timeout");
    expect(outcome.errorClass).not.toBe("network_error");
  });

  it("a 201 whose body is cut off mid-stream is retryable, never delivered", async () => {
    const { baseUrl } = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(201, { ...JSON_TYPE, "content-length": "200" });
      res.write('{"order":{"id":"3f1b6c2e', () => res.socket?.destroy());
    });

    const outcome = await realClient(baseUrl).sendOrderPaid(delivery());

    expect(outcome.kind).toBe("retryable");
    if (outcome.kind !== "retryable") return;
    expect(outcome.errorClass).not.toBe("timeout");
    expect(outcome.errorClass).not.toBe("");
  });

  it("a refused connection is retryable ECONNREFUSED", async () => {
    const running = await startServer(() => {});
    await stopServer(running); // the port was just ours and is now closed

    const outcome = await realClient(running.baseUrl).sendOrderPaid(delivery());

    expect(outcome).toMatchObject({ kind: "retryable", errorClass: "ECONNREFUSED" });
    expect(outcome).not.toHaveProperty("httpStatus");
  });

  it("an answer larger than 64 KiB does not break the client and yields a bounded message", async () => {
    const page = `<html><body>${"stack frame\n".repeat(Math.ceil((200 * 1024) / 12))}</body></html>`;
    expect(Buffer.byteLength(page)).toBeGreaterThan(200 * 1024);
    const { baseUrl } = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(500, { "content-type": "text/html", "content-length": String(Buffer.byteLength(page)) });
      res.end(page);
    });
    const client = realClient(baseUrl);

    const outcome = await client.sendOrderPaid(delivery());

    expect(outcome).toMatchObject({ kind: "retryable", httpStatus: 500, errorClass: "http_500" });
    if (outcome.kind !== "retryable") return;
    expect(outcome.message.length).toBeLessThanOrEqual(400);
  });

  it("close() resolves, may be called twice, and releases the kept-alive connection", async () => {
    const { baseUrl, sockets } = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(201, JSON_TYPE).end(JSON.stringify({ order: ORDER }));
    });
    const client = realClient(baseUrl, { timeoutMs: 2_000 });
    expect((await client.sendOrderPaid(delivery())).kind).toBe("delivered");
    expect(sockets.size).toBe(1);

    await expect(client.close()).resolves.toBeUndefined();
    await expect(client.close()).resolves.toBeUndefined();

    // Without close() the Agent would keep this socket for its 10 s keep-alive.
    await Promise.all([...sockets].map((socket) => (socket.closed ? undefined : once(socket, "close"))));
  });
});

/**
 * Transport guard. msw intercepts global fetch and node:http, not `undici.request`, so msw handlers cannot stand
 * in for 1C in OnecClient tests: inject a MockAgent instead. If this test starts failing, the client's transport
 * was swapped (e.g. to fetch) and the MockAgent-based tests above no longer exercise what they claim to.
 */
describe("transport guard: msw does not intercept OnecClient", () => {
  it("a msw handler for the same URL catches fetch but not OnecClient; the real server answers", async () => {
    const realOrder = { id: "real-server", number: "ORD-REAL" };
    const mswOrder = { id: "msw-handler", number: "ORD-MSW" };
    const { baseUrl } = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(201, JSON_TYPE).end(JSON.stringify({ order: realOrder }));
    });
    const url = `${baseUrl}v1/orders/paid`;
    let mswCalls = 0;
    const msw = setupServer(
      mswHttp.post(url, () => {
        mswCalls += 1;
        return HttpResponse.json({ order: mswOrder }, { status: 201 });
      }),
    );
    msw.listen({ onUnhandledFrame: "error" });
    try {
      const outcome = await realClient(baseUrl).sendOrderPaid(delivery());
      expect(outcome).toEqual({ kind: "delivered", httpStatus: 201, order: realOrder });
      expect(mswCalls).toBe(0);

      // The handler itself is live: the same URL through fetch is answered by msw.
      const viaFetch = await fetch(url, { method: "POST", body: delivery().body });
      expect(await viaFetch.json()).toEqual({ order: mswOrder });
      expect(mswCalls).toBe(1);
    } finally {
      msw.close();
    }
  });
});
