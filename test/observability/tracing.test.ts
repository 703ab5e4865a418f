import { join } from "node:path";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { createDeliveryStack } from "../../src/gateway.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createTracing, installTracing, type Tracing } from "../../src/observability/tracing.ts";
import { type OnecEmulator, type PostReceived, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewaysPerTest } from "../support/gateway.ts";
import { call, postEvent } from "../support/http.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Trace context from the shop to 1C (issue 25, part 5), with the SDK's
 * in-memory exporter. The ids are the W3C Recommendation's own example
 * (traceparent §3.2.2.5): what a shop's tracer would send.
 */
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SHOP_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${SHOP_SPAN_ID}-01`;
const TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let onec: OnecEmulator;
const posts: PostReceived[] = [];

beforeAll(async () => {
  tracing = await createTracing(
    { serviceName: "gateway-under-test", sampler: { kind: "always_on", parentBased: true, ratio: 1 } },
    exporter,
  );
  installTracing(tracing);
  onec = await startOnecEmulator();
  onec.events.on("post", (post: PostReceived) => posts.push(post));
});
afterAll(async () => {
  installTracing(undefined);
  await tracing.shutdown();
  await onec.close();
});
beforeEach(() => {
  exporter.reset();
  posts.length = 0;
});

const gateway = gatewaysPerTest({ SYNC_WAIT_MS: "3000", DELIVERY_POLL_MS: "20", RETRY_BASE_MS: "20" });

const spans = () => exporter.getFinishedSpans();
const ofKind = (kind: SpanKind) => spans().filter((span) => span.kind === kind);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const postFor = (eventId: string) => posts.find((post) => post.key === eventId);

describe("W3C trace context from the shop through the register to 1C", () => {
  it("makes the request's server span a child of the shop's traceparent, and the attempt a client span of the same trace, whose id 1C receives", async () => {
    const gw = await gateway({ ONEC_URL: onec.url });
    const event = orderPaidEvent();
    const answer = await postEvent(gw.url, event, {
      traceparent: TRACEPARENT,
      tracestate: TRACESTATE,
      "x-correlation-id": "shop-trace-1",
    });
    expect(answer.status).toBe(201);

    const [server] = ofKind(SpanKind.SERVER);
    expect(server?.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(server as ReadableSpan)).toBe(SHOP_SPAN_ID);
    const serverId = server?.spanContext().spanId;

    const reserve = ofKind(SpanKind.INTERNAL).find((span) => span.attributes["gateway.event_id"] === event.event_id);
    expect(reserve?.spanContext().traceId).toBe(TRACE_ID);
    expect(reserve === undefined ? undefined : parentOf(reserve)).toBe(serverId);

    const [attempt] = ofKind(SpanKind.CLIENT);
    expect(attempt?.spanContext().traceId).toBe(TRACE_ID);
    expect(attempt === undefined ? undefined : parentOf(attempt)).toBe(serverId);

    // 1C is sent the attempt's own span as the parent, sampled as the shop asked, and the shop's tracestate.
    const post = postFor(event.event_id);
    expect(post?.traceparent).toBe(`00-${TRACE_ID}-${attempt?.spanContext().spanId}-01`);
    expect(post?.tracestate).toBe(TRACESTATE);

    // The logs link the correlation id and the trace id: the request's line and the attempt's.
    const requestLine = gw.logs.find((line) => line.msg === "request completed" && line.event_id === event.event_id);
    expect(requestLine).toMatchObject({ correlation_id: "shop-trace-1", trace_id: TRACE_ID });
    const attemptLine = gw.logs.find((line) => line.msg === "1C answered" && line.event_id === event.event_id);
    expect(attemptLine).toMatchObject({ correlation_id: "shop-trace-1", trace_id: TRACE_ID });
  });

  it.each([
    ["uppercase hex", `00-${TRACE_ID.toUpperCase()}-${SHOP_SPAN_ID}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${SHOP_SPAN_ID}-01`],
    ["an all-zero parent id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${TRACE_ID}-${SHOP_SPAN_ID}-01`],
    ["version 00 with more after the flags", `${TRACEPARENT}-extra`],
    ["a short parent id", `00-${TRACE_ID}-${SHOP_SPAN_ID.slice(1)}-01`],
    ["two traceparents", `${TRACEPARENT}, 00-${"1".repeat(32)}-${SHOP_SPAN_ID}-01`],
    ["no structure at all", "hello"],
  ])("ignores a traceparent with %s: the request is accepted and starts a new trace", async (_case, traceparent) => {
    const gw = await gateway({ ONEC_URL: onec.url });
    const event = orderPaidEvent();
    const answer = await postEvent(gw.url, event, { traceparent, tracestate: TRACESTATE });
    expect(answer.status).toBe(201);

    const [server] = ofKind(SpanKind.SERVER);
    const newTrace = server?.spanContext().traceId;
    expect(server?.parentSpanContext).toBeUndefined();
    expect(newTrace).toMatch(/^[0-9a-f]{32}$/);
    expect(newTrace).not.toBe(TRACE_ID);
    // tracestate without a valid traceparent means nothing: it is not passed on.
    const post = postFor(event.event_id);
    expect(post?.traceparent?.slice(3, 35)).toBe(newTrace);
    expect(post?.tracestate).toBeUndefined();
  });

  it("continues a later version's traceparent by its version-00 fields", async () => {
    const gw = await gateway({ ONEC_URL: onec.url });
    const event = orderPaidEvent();
    await postEvent(gw.url, event, { traceparent: `cc-${TRACE_ID}-${SHOP_SPAN_ID}-01-what-comes-next` });
    const [server] = ofKind(SpanKind.SERVER);
    expect(server?.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(server as ReadableSpan)).toBe(SHOP_SPAN_ID);
  });

  it("drops a malformed tracestate alone and keeps the traceparent", async () => {
    const gw = await gateway({ ONEC_URL: onec.url });
    const event = orderPaidEvent();
    await postEvent(gw.url, event, { traceparent: TRACEPARENT, tracestate: "Congo=upper-case-key" });
    const post = postFor(event.event_id);
    expect(post?.traceparent?.slice(3, 35)).toBe(TRACE_ID);
    expect(post?.tracestate).toBeUndefined();
  });

  it("carries a platform webhook's traceparent to 1C the same way", async () => {
    const dir = tempDir();
    try {
      const source = { sender: "shop-a", platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP };
      const sourcesFile = writeSourcesFile(dir.path, [source]);
      const gw = await gateway({ ONEC_URL: onec.url, SOURCES_FILE: sourcesFile });
      const body = shopifyBody(
        shopifyOrder({
          id: 910000000000000001n,
          admin_graphql_api_id: "gid://shopify/Order/910000000000000001",
        }),
      );
      const answer = await call(`${gw.url}/integration/v1/webhooks/shopify/shop-a`, {
        method: "POST",
        body,
        headers: { ...shopifyHeaders(body), traceparent: TRACEPARENT, tracestate: TRACESTATE },
      });
      // Taken: a 2xx, whatever the platform's answer says beyond that.
      expect(Math.floor(answer.status / 100)).toBe(2);
      const [server] = ofKind(SpanKind.SERVER);
      expect(server?.spanContext().traceId).toBe(TRACE_ID);
      expect(parentOf(server as ReadableSpan)).toBe(SHOP_SPAN_ID);
      await expect.poll(() => ofKind(SpanKind.CLIENT).length, { timeout: 5000 }).toBe(1);
      const [attempt] = ofKind(SpanKind.CLIENT);
      const post = posts.find((received) => received.key?.endsWith("shopify:910000000000000001"));
      expect(post?.traceparent).toBe(`00-${TRACE_ID}-${attempt?.spanContext().spanId}-01`);
      expect(post?.tracestate).toBe(TRACESTATE);
    } finally {
      dir.remove();
    }
  });

  it("continues the stored trace when another process delivers the event, after the accepting one is gone", async () => {
    // The accepting gateway has no deliverer and 1C is nowhere: the event waits in the register.
    const dir = tempDir();
    const databasePath = join(dir.path, "gateway.db");
    const accepting = await gateway({
      DATABASE_URL: databasePath,
      ONEC_URL: "http://127.0.0.1:9",
      DELIVERER: "off",
      SYNC_WAIT_MS: "0",
    });
    const event = orderPaidEvent();
    const answer = await postEvent(accepting.url, event, { traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(answer.status).toBe(202);
    const serverId = ofKind(SpanKind.SERVER)[0]?.spanContext().spanId;
    await accepting.close();
    exporter.reset();

    // A fresh delivery stack on the same file: nothing of the request is in memory any more.
    const config = loadConfig({ DATABASE_URL: databasePath, ONEC_URL: onec.url, DELIVERY_POLL_MS: "20" });
    const worker = await createDeliveryStack(config, createLogger("silent"));
    try {
      worker.deliverer.start();
      await expect.poll(() => postFor(event.event_id), { timeout: 5000 }).toBeDefined();
      await expect.poll(() => ofKind(SpanKind.CLIENT).length, { timeout: 5000 }).toBe(1);
    } finally {
      await worker.close();
      dir.remove();
    }
    const [attempt] = ofKind(SpanKind.CLIENT);
    expect(attempt?.spanContext().traceId).toBe(TRACE_ID);
    expect(attempt === undefined ? undefined : parentOf(attempt)).toBe(serverId);
    expect(postFor(event.event_id)?.traceparent).toBe(`00-${TRACE_ID}-${attempt?.spanContext().spanId}-01`);
    expect(postFor(event.event_id)?.tracestate).toBe(TRACESTATE);
  });

  it("with tracing off, passes the shop's context to 1C as it came and logs its trace id", async () => {
    installTracing(undefined);
    try {
      const gw = await gateway({ ONEC_URL: onec.url });
      const event = orderPaidEvent();
      expect((await postEvent(gw.url, event, { traceparent: TRACEPARENT, tracestate: TRACESTATE })).status).toBe(201);
      expect(postFor(event.event_id)).toMatchObject({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
      const requestLine = gw.logs.find((line) => line.msg === "request completed" && line.event_id === event.event_id);
      expect(requestLine?.trace_id).toBe(TRACE_ID);

      const untraced = orderPaidEvent();
      expect((await postEvent(gw.url, untraced)).status).toBe(201);
      expect(postFor(untraced.event_id)?.traceparent).toBeUndefined();
      const untracedLine = gw.logs.find(
        (line) => line.msg === "request completed" && line.event_id === untraced.event_id,
      );
      expect(untracedLine).not.toHaveProperty("trace_id");
      expect(spans()).toEqual([]);
    } finally {
      installTracing(tracing);
    }
  });
});
