import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call } from "../support/http.ts";

/**
 * docs/api.md: X-Correlation-ID is "1–128 of `A-Z a-z 0-9 . _ : @ / + = -`;
 * otherwise the gateway makes a UUIDv7 … Echoed on every answer". The
 * METRICS_PORT listener's answers are answers too: a scrape, a refused
 * scrape and a 404.
 */

const METRICS_TOKEN = "metrics-token-Fj5cV8mR2dL7";
const ONEC_URL = "http://127.0.0.1:9"; // never called: this gateway delivers nothing
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("METRICS_PORT: every answer carries X-Correlation-ID", () => {
  let gw: TestGateway;
  let metricsUrl: string;
  beforeAll(async () => {
    gw = await startTestGateway({ ONEC_URL, HOST: "0.0.0.0", METRICS_PORT: "0", METRICS_TOKEN });
    const metricsApp = gw.gateway.metricsApp;
    if (metricsApp === undefined) throw new Error("METRICS_PORT set, and no metrics listener");
    await metricsApp.listen({ host: "127.0.0.1", port: 0 });
    metricsUrl = `http://127.0.0.1:${(metricsApp.server.address() as AddressInfo).port}`;
  });
  afterAll(() => gw.close());

  const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };

  it("echoes a valid X-Correlation-ID on a scrape, a 401 and a 404", async () => {
    const cases = [
      { path: "/metrics", headers: bearer, status: 200 },
      { path: "/metrics", headers: {}, status: 401 },
      { path: "/elsewhere", headers: bearer, status: 404 },
    ];
    for (const [index, c] of cases.entries()) {
      const id = `scrape-${index}:a/b+c=d@e`;
      const answer = await call(`${metricsUrl}${c.path}`, { headers: { ...c.headers, "x-correlation-id": id } });
      expect(answer.status).toBe(c.status);
      expect(answer.headers["x-correlation-id"]).toBe(id);
      if (c.status !== 200) expect(answer.json().correlation_id).toBe(id);
    }
  });

  it("makes a UUIDv7 when none is sent, or one that is not valid, and names it in the problem too", async () => {
    const sent: Array<Record<string, string>> = [
      {},
      { "x-correlation-id": "not valid: spaces" },
      { "x-correlation-id": "x".repeat(129) },
    ];
    for (const headers of sent) {
      const scrape = await call(`${metricsUrl}/metrics`, { headers: { ...bearer, ...headers } });
      expect(scrape.status).toBe(200);
      expect(scrape.headers["x-correlation-id"]).toMatch(UUID_V7);
      const refused = await call(`${metricsUrl}/metrics`, { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers["x-correlation-id"]).toMatch(UUID_V7);
      expect(refused.json().correlation_id).toBe(refused.headers["x-correlation-id"]);
    }
  });
});
