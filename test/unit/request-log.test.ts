import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deferredChildLogger } from "../../src/http/deferred-child-logger.ts";
import { RequestLog } from "../../src/http/request-log.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { call } from "../support/http.ts";

/**
 * The request line is written without the redactor's per-field pass
 * (issue 13): it must stay the line the request's own logger writes, byte
 * for byte but for the time, and a line with an error keeps the redaction.
 */

const lines: string[] = [];
/** Child loggers made of the root logger: Fastify's per-request child among them, when it is made. */
let childrenMade = 0;
let app: FastifyInstance;
let url: string;

/** The line as the request's own logger (a child binding the correlation id) writes it: the line before issue 13. */
function lineOfRequestLogger(correlationId: string, fields: Record<string, unknown>): Promise<string> {
  return new Promise((resolve) => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        resolve(chunk.toString("utf8").trimEnd());
        done();
      },
    });
    createLogger("info", sink).child({ correlation_id: correlationId }).info(fields, "request completed");
  });
}

const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"-"');

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  const root = createLogger("info", sink);
  const child = root.child.bind(root);
  root.child = ((...args: Parameters<typeof child>) => {
    childrenMade += 1;
    return child(...args);
  }) as typeof root.child;
  app = Fastify({
    loggerInstance: root as FastifyBaseLogger,
    logController: new RequestLog(),
    // As src/app.ts builds it.
    childLoggerFactory: deferredChildLogger,
    genReqId: (request) => String(request.headers["x-correlation-id"] ?? "generated"),
  });
  app.decorateRequest("sender", "shop-a");
  app.decorateRequest("logEvent", undefined);
  app.post("/events", async (request) => {
    request.logEvent = { eventId: "evt-1", eventStatus: "SUCCEEDED" };
    return { ok: true };
  });
  app.get("/quiet", { logLevel: "warn" }, async () => ({ ok: true }));
  app.get("/noted", { logLevel: "warn" }, async (request) => {
    request.log.info("not written: the route logs from warn up");
    request.log.warn({ order: { customer: { email: "anna.smirnova@example.com" } } }, "a note from the handler");
    return { ok: true };
  });
  app.get("/failing-hook", {
    onResponse: async () => {
      throw Object.assign(new Error("hook failed"), { customer: { email: "anna.smirnova@example.com" } });
    },
    handler: async () => ({ ok: true }),
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(() => app.close());

function linesOf(correlationId: string): Array<Record<string, unknown>> {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((l) => l.correlation_id === correlationId);
}

describe("the request log line", () => {
  it("is the line the request's own logger writes, byte for byte but for the time", async () => {
    await call(`${url}/events`, {
      body: "{}",
      headers: { "content-type": "application/json", "x-correlation-id": "corr-7" },
    });
    const written = lines.find((line) => line.includes('"correlation_id":"corr-7"'));
    expect(written).toBeDefined();
    const { duration_ms } = JSON.parse(written as string) as { duration_ms: number };
    const expected = await lineOfRequestLogger("corr-7", {
      method: "POST",
      url: "/events",
      status: 200,
      duration_ms,
      client_ip: "127.0.0.1",
      sender: "shop-a",
      event_id: "evt-1",
      event_status: "SUCCEEDED",
    });
    expect(withoutTime(written as string)).toBe(withoutTime(expected));
    expect(Object.keys(JSON.parse(written as string))).toEqual([
      "level",
      "time",
      "service",
      "correlation_id",
      "method",
      "url",
      "status",
      "duration_ms",
      "client_ip",
      "sender",
      "event_id",
      "event_status",
      "msg",
    ]);
  });

  it("is not written for a route whose own log level is above info", async () => {
    await call(`${url}/quiet`, { headers: { "x-correlation-id": "corr-quiet" } });
    await call(`${url}/events`, {
      body: "{}",
      headers: { "content-type": "application/json", "x-correlation-id": "corr-after" },
    });
    expect(linesOf("corr-after")).toHaveLength(1);
    expect(linesOf("corr-quiet")).toEqual([]);
  });

  it("keeps the logger's redaction on a line with an error", async () => {
    await call(`${url}/failing-hook`, { headers: { "x-correlation-id": "corr-err" } });
    await expect.poll(() => linesOf("corr-err").length).toBe(1);
    const [line] = linesOf("corr-err");
    expect(line).toMatchObject({ level: 50, msg: "request errored", status: 200 });
    expect(JSON.stringify(line)).not.toContain("anna.smirnova@example.com");
    expect(line?.err).toMatchObject({ message: "hook failed", customer: { email: "[REDACTED]" } });
  });

  it("makes no per-request child logger for a request that writes only its line", async () => {
    await call(`${url}/events`, {
      body: "{}",
      headers: { "content-type": "application/json", "x-correlation-id": "corr-warm" },
    });
    const before = childrenMade;
    await call(`${url}/events`, {
      body: "{}",
      headers: { "content-type": "application/json", "x-correlation-id": "corr-cheap" },
    });
    expect(linesOf("corr-cheap")).toHaveLength(1);
    expect(childrenMade).toBe(before);
  });

  it("writes a handler's own lines with the request's correlation id, level and redaction", async () => {
    await call(`${url}/noted`, { headers: { "x-correlation-id": "corr-noted" } });
    const noted = linesOf("corr-noted");
    expect(noted.map((line) => line.msg)).toEqual(["a note from the handler"]);
    expect(noted[0]).toMatchObject({ level: 40, order: { customer: { email: "[REDACTED]" } } });
  });
});
