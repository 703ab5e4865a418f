import { describe, expect, it, vi } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { rawExchange, rawRequestBytes } from "../support/raw-http.ts";
import { type Exposition, parseExposition, sampleValue, scrapeMetrics } from "./exposition.ts";

const METRIC = "gateway_http_responses_total";
// The routes as the gateway declares them (README: POST /integration/v1/orders/paid, GET …/{event_id}).
const ORDERS = "/integration/v1/orders/paid";
const STATUS_URL = "/integration/v1/orders/paid/:event_id";

const h = gatewayWithEmulator();

function answers(exposition: Exposition, route: string, statusCode: string): number {
  return sampleValue(exposition, METRIC, { route, status_code: statusCode });
}

describe("gateway_http_responses_total", () => {
  it("counts each answer under its route pattern and status code, never under the URL", async () => {
    const before = await scrapeMetrics(h.gw.url);
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event)).status).toBe(201);
    expect((await call(`${h.gw.url}${ORDERS}/${event.event_id}`)).status).toBe(200);
    expect((await call(`${h.gw.url}/no-such-route/${event.event_id}`)).status).toBe(404);
    const after = await scrapeMetrics(h.gw.url);

    const delta = (route: string, statusCode: string) =>
      answers(after, route, statusCode) - answers(before, route, statusCode);
    expect(delta(ORDERS, "201")).toBe(1);
    expect(delta(STATUS_URL, "200")).toBe(1);
    expect(delta("unmatched", "404")).toBe(1);
    expect(delta(ORDERS, "200")).toBe(0);
    const routes = after.samples.filter((s) => s.name === METRIC).map((s) => s.labels.route ?? "");
    expect(routes.filter((route) => route.includes(event.event_id))).toEqual([]);
  });

  it("counts the answers given before any route is chosen (400, 414, 417, 431, 501), and logs each with its correlation id", async () => {
    const before = await scrapeMetrics(h.gw.url);
    // Headers past the gateway's 16 KiB (README: 431), an Expect other than 100-continue (RFC 9110 §10.1.1: 417),
    // CONNECT, which only a proxy serves (501), a malformed % escape (400) and a segment no event_id is as long as (414).
    const oversized = await rawExchange(
      h.gw.url,
      rawRequestBytes({ method: "GET", target: "/healthz", headers: [`X-Padding: ${"a".repeat(20 * 1024)}`] }),
    );
    const expectation = await rawExchange(
      h.gw.url,
      rawRequestBytes({ method: "POST", target: ORDERS, headers: ["Expect: 200-ok"], body: "{}" }),
    );
    const tunnel = await rawExchange(
      h.gw.url,
      rawRequestBytes({ method: "CONNECT", target: "gateway.test:443", headers: [] }),
    );
    const badEscape = await rawExchange(
      h.gw.url,
      rawRequestBytes({ method: "GET", target: `${ORDERS}/%zz`, headers: [] }),
    );
    const longSegment = await rawExchange(
      h.gw.url,
      rawRequestBytes({ method: "GET", target: `${ORDERS}/${"a".repeat(500)}`, headers: [] }),
    );
    expect([oversized, expectation, tunnel, badEscape, longSegment].map((a) => a.status)).toEqual([
      431, 417, 501, 400, 414,
    ]);
    const after = await scrapeMetrics(h.gw.url);
    for (const status of ["431", "417", "501", "400", "414"])
      expect(answers(after, "unmatched", status) - answers(before, "unmatched", status), status).toBe(1);
    // The correlation id the client was given is in a log line, as with every other answer.
    const refused = oversized.headers["x-correlation-id"]?.[0];
    expect(refused).toBeDefined();
    await vi.waitFor(() =>
      expect(h.gw.logs.find((line) => line.correlation_id === refused)).toMatchObject({ status: 431 }),
    );
  });

  it("counts a 5xx: the register unavailable answers 503", async () => {
    const broken = await startTestGateway({ ONEC_URL: h.onec.url });
    try {
      await broken.gateway.register.close();
      expect((await postEvent(broken.url, orderPaidEvent())).status).toBe(503);
      // GET /metrics reads the backlog from the closed register and answers 503 too; the
      // counter is read from the registry, in the same exposition format.
      const exposition = parseExposition(await broken.gateway.metrics.registry.getSingleMetricAsString(METRIC));
      expect(answers(exposition, ORDERS, "503")).toBe(1);
      expect(answers(exposition, ORDERS, "201")).toBe(0);
    } finally {
      await broken.close();
    }
  });
});
