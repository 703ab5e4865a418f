import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.ts";
import { isLoopback, type MetricsSettings, metricsExposure } from "../../src/config/metrics-exposure.ts";

// Issue 22, finding 10: "/metrics is unauthenticated on the main listener."
const TOKEN = "metrics-token-Fj5cV8mR2dL7";
const settings = (overrides: Partial<MetricsSettings>): MetricsSettings => ({
  host: "0.0.0.0",
  trustProxy: [],
  token: undefined,
  port: undefined,
  metricsHost: undefined,
  ...overrides,
});

describe("where /metrics is served, and to whom", () => {
  it("is closed on the main listener of a gateway reachable from other machines, unless a token is set", () => {
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "gateway.internal"]) {
      expect(metricsExposure(settings({ host }))).toEqual({ listener: { kind: "main" }, access: "closed" });
      expect(metricsExposure(settings({ host, token: TOKEN }))).toEqual({
        listener: { kind: "main" },
        access: "token",
      });
    }
  });

  it("is open on a loopback main listener (npm run demo, a laptop) unless a proxy is trusted in front of it", () => {
    for (const host of ["127.0.0.1", "::1", "localhost", "127.0.0.2"]) {
      expect(metricsExposure(settings({ host })).access).toBe("open");
      // A proxy on this machine forwards the world's requests to 127.0.0.1: /metrics would be public again.
      expect(metricsExposure(settings({ host, trustProxy: ["127.0.0.1"] })).access).toBe("closed");
      expect(metricsExposure(settings({ host, token: TOKEN })).access).toBe("token");
    }
  });

  it("moves to a listener of its own with METRICS_PORT, on loopback unless METRICS_HOST says otherwise", () => {
    expect(metricsExposure(settings({ port: 9464 }))).toEqual({
      listener: { kind: "own", host: "127.0.0.1", port: 9464 },
      access: "open",
    });
    // The proxy in front of the API never reaches another port: loopback is enough there.
    expect(metricsExposure(settings({ port: 9464, trustProxy: ["127.0.0.1"] })).access).toBe("open");
    expect(metricsExposure(settings({ port: 9464, metricsHost: "0.0.0.0", token: TOKEN }))).toEqual({
      listener: { kind: "own", host: "0.0.0.0", port: 9464 },
      access: "token",
    });
  });

  it("refuses a listener of its own on a public address without a token, and METRICS_HOST without METRICS_PORT", () => {
    expect(() => metricsExposure(settings({ port: 9464, metricsHost: "0.0.0.0" }))).toThrow(
      /^METRICS_HOST=0\.0\.0\.0 serves \/metrics beyond this machine: set METRICS_TOKEN/,
    );
    expect(() => metricsExposure(settings({ metricsHost: "127.0.0.1" }))).toThrow(/^METRICS_HOST .* set METRICS_PORT/);
  });

  it("knows loopback addresses", () => {
    expect(["127.0.0.1", "127.9.9.9", "::1", "[::1]", "::ffff:127.0.0.1", "LOCALHOST"].map(isLoopback)).toEqual(
      Array(6).fill(true),
    );
    expect(["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "::2", "localhost.example"].map(isLoopback)).toEqual(
      Array(6).fill(false),
    );
  });
});

describe("loadConfig's metrics settings", () => {
  const base = { ONEC_URL: "http://1c.test" };
  it("reads METRICS_PORT, METRICS_HOST and METRICS_TOKEN, and checks them", () => {
    expect(loadConfig(base).metrics).toEqual({ listener: { kind: "main" }, access: "closed" });
    expect(loadConfig({ ...base, HOST: "127.0.0.1" }).metrics.access).toBe("open");
    expect(loadConfig({ ...base, METRICS_PORT: "9464", METRICS_HOST: "0.0.0.0", METRICS_TOKEN: TOKEN })).toMatchObject({
      metricsToken: TOKEN,
      metrics: { listener: { kind: "own", host: "0.0.0.0", port: 9464 }, access: "token" },
    });
    expect(() => loadConfig({ ...base, METRICS_PORT: "http" })).toThrow(/^METRICS_PORT must be a whole number/);
    expect(() => loadConfig({ ...base, METRICS_PORT: "9464", METRICS_HOST: "::" })).toThrow(ConfigError);
  });
});
