import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call, type HttpAnswer } from "../support/http.ts";

// Issue 22, finding 10: "/metrics is unauthenticated on the main listener."
const METRICS_TOKEN = "metrics-token-Fj5cV8mR2dL7";
const SHOP = "shop-token-Zr8wN3bT6yH1";
const ONEC_URL = "http://127.0.0.1:9"; // never called: these gateways deliver nothing

function expectUnauthorized(answer: HttpAnswer, challenge: string): void {
  expect(answer.status).toBe(401);
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  // RFC 6750 §3: the challenge names the scheme, and says when the token sent was wrong.
  expect(answer.headers["www-authenticate"]).toBe(challenge);
  const problem = JSON.parse(answer.text) as { status: number; type: string };
  expect(problem.status).toBe(401);
  expect(problem.type).toMatch(/unauthorized$/);
  expect(answer.text).not.toContain("gateway_");
}

describe("a gateway listening on every address, with no METRICS_TOKEN", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The image's, compose's and the systemd unit's default: HOST 0.0.0.0.
    gw = await startTestGateway({ ONEC_URL, HOST: "0.0.0.0", SENDER_TOKENS: `shop-a:${SHOP}` });
  });
  afterAll(() => gw.close());

  it("shows its metrics to nobody: 401 with a Bearer challenge, the series never sent", async () => {
    expectUnauthorized(await call(`${gw.url}/metrics`), 'Bearer realm="metrics"');
    expectUnauthorized(
      await call(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${SHOP}` } }),
      'Bearer realm="metrics", error="invalid_token"',
    );
  });

  it("says what to set", async () => {
    expect(JSON.parse((await call(`${gw.url}/metrics`)).text).detail).toMatch(/METRICS_TOKEN/);
  });
});

describe("a gateway on loopback behind a trusted proxy, with no METRICS_TOKEN", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // nginx on the same machine forwards the world's requests from 127.0.0.1.
    gw = await startTestGateway({ ONEC_URL, HOST: "127.0.0.1", TRUST_PROXY: "127.0.0.1" });
  });
  afterAll(() => gw.close());

  it("is closed too", async () => {
    expectUnauthorized(await call(`${gw.url}/metrics`), 'Bearer realm="metrics"');
  });
});

describe("a gateway with METRICS_TOKEN (Prometheus: authorization: { credentials_file: … })", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      ONEC_URL,
      HOST: "0.0.0.0",
      METRICS_TOKEN,
      SENDER_TOKENS: `shop-a:${SHOP}`,
    });
  });
  afterAll(() => gw.close());

  it("answers the scrape that sends it, as Prometheus does (type Bearer by default)", async () => {
    const answer = await call(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(answer.text).toMatch(/^gateway_pending_events \d+$/m);
  });

  it("refuses no token, a wrong one, a sender's, and the token sent another way", async () => {
    expectUnauthorized(await call(`${gw.url}/metrics`), 'Bearer realm="metrics"');
    for (const authorization of [
      `Bearer ${METRICS_TOKEN}x`,
      `Bearer ${SHOP}`,
      `Bearer ${METRICS_TOKEN.slice(0, -1)}`,
    ]) {
      expectUnauthorized(
        await call(`${gw.url}/metrics`, { headers: { authorization } }),
        'Bearer realm="metrics", error="invalid_token"',
      );
    }
    expectUnauthorized(
      await call(`${gw.url}/metrics`, {
        headers: { authorization: `Basic ${Buffer.from(`prometheus:${METRICS_TOKEN}`).toString("base64")}` },
      }),
      'Bearer realm="metrics"',
    );
  });

  it("still answers the probes without a token", async () => {
    expect((await call(`${gw.url}/healthz`)).status).toBe(200);
  });
});

describe("METRICS_PORT: /metrics on a listener of its own", () => {
  let gw: TestGateway;
  let metricsUrl: string;
  beforeAll(async () => {
    gw = await startTestGateway({ ONEC_URL, HOST: "0.0.0.0", METRICS_PORT: "0" });
    const metricsApp = gw.gateway.metricsApp;
    if (metricsApp === undefined) throw new Error("METRICS_PORT set, and no metrics listener");
    await metricsApp.listen({ host: "127.0.0.1", port: 0 });
    metricsUrl = `http://127.0.0.1:${(metricsApp.server.address() as AddressInfo).port}`;
  });
  afterAll(() => gw.close());

  it("serves it there, open on loopback, and nothing else", async () => {
    const answer = await call(`${metricsUrl}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^gateway_breaker_state 0$/m);
    const other = await call(`${metricsUrl}/integration/v1/orders/paid/evt-1`);
    expect(other.status).toBe(404);
    expect(other.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("sends X-Content-Type-Options: nosniff on its answers too (docs/security.md: every answer)", async () => {
    expect((await call(`${metricsUrl}/metrics`)).headers["x-content-type-options"]).toBe("nosniff");
    expect((await call(`${metricsUrl}/elsewhere`)).headers["x-content-type-options"]).toBe("nosniff");
  });

  it("no longer serves it beside the API", async () => {
    expect((await call(`${gw.url}/metrics`)).status).toBe(404);
  });
});
