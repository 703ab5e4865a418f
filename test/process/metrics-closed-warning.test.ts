import { afterEach, describe, expect, it } from "vitest";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

/**
 * docs/operations.md, "Who can read /metrics": without METRICS_TOKEN, /metrics is
 * closed everywhere but a loopback listener that trusts no proxy, "and the
 * server logs a warning at start" — the operator learns it from the log, not
 * from a Prometheus target that turned red. The built server (npm start).
 */
describe("the built gateway with /metrics closed", { timeout: 30_000 }, () => {
  const dir = tempDir("metrics-warning-");
  let gateway: GatewayProcess | undefined;
  afterEach(async () => {
    await gateway?.kill();
    dir.remove();
  });

  it("logs one warning at start that names METRICS_TOKEN, and answers /metrics 401", async () => {
    // Loopback, but behind a trusted proxy: the proxy would pass the world's requests.
    gateway = await spawnGateway({
      DATABASE_URL: `${dir.path}/gateway.db`,
      ONEC_URL: "http://127.0.0.1:9/1c",
      TRUST_PROXY: "127.0.0.1",
    });
    const line = JSON.parse(await gateway.waitForLine(/METRICS_TOKEN/)) as { level: number; msg: string };
    expect(line.level).toBe(40); // pino's warn
    expect(line.msg).toMatch(/\/metrics/);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
  });
});
