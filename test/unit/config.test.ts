import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, type GatewayConfig, loadConfig } from "../../src/config/load-config.ts";
import { nextAttemptDelayMs } from "../../src/delivery/retry-policy.ts";

const base = { ONEC_URL: "http://1c.local/base/hs/integration/" };

describe("loadConfig", () => {
  it("fills the documented defaults", () => {
    expect(loadConfig(base)).toMatchObject({
      port: 8080,
      database: { kind: "sqlite", path: "data/gateway.db" },
      onecUrl: "http://1c.local/base/hs/integration",
      syncWaitMs: 2000,
      bodyLimit: 262144,
      webhookBodyLimit: 2097152,
      logLevel: "info",
    });
  });

  it("requires ONEC_URL unless a default is given", () => {
    expect(() => loadConfig({})).toThrow(ConfigError);
    expect(loadConfig({}, { onecUrl: "http://127.0.0.1:8081" }).onecUrl).toBe("http://127.0.0.1:8081");
  });

  it.each([
    ["PORT", "http"],
    ["PORT", "70000"],
    ["SYNC_WAIT_MS", "-1"],
    ["BODY_LIMIT", "1.5"],
    ["WEBHOOK_BODY_LIMIT", "100"],
    ["LOG_LEVEL", "loud"],
    ["ONEC_URL", "ftp://x"],
    ["ONEC_URL", "http://user:pw@1c"],
    ["DATABASE_URL", "sqlite:"],
  ])("refuses %s=%s with a line that names it", (name, value) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(new RegExp(`^${name}`));
  });

  it("reads sqlite and file URLs as paths, and postgres URLs as a server", () => {
    expect(loadConfig({ ...base, DATABASE_URL: "sqlite:/var/lib/gw.db" }).database).toEqual({
      kind: "sqlite",
      path: "/var/lib/gw.db",
    });
    expect(loadConfig({ ...base, DATABASE_URL: "file:data/x.db" }).database).toEqual({
      kind: "sqlite",
      path: "data/x.db",
    });
    expect(loadConfig({ ...base, DATABASE_URL: "postgresql://gw@db:5432/gw" }).database).toEqual({
      kind: "postgres",
      url: "postgresql://gw@db:5432/gw",
    });
  });
});

describe("breaker defaults (issue 8: resume within 5 s of 1C's recovery)", () => {
  it("start the cooldown at 1 s and cap it at 3 s, so a probe finds a recovered 1C within 3 s", () => {
    const config = loadConfig({ ONEC_URL: "http://1c.test" });
    expect([config.breakerCooldownMs, config.breakerMaxCooldownMs]).toEqual([1000, 3000]);
  });
});

describe("DATABASE_POOL_MAX (README: ONEC_MAX_CONCURRENCY + 10 by default)", () => {
  it("follows ONEC_MAX_CONCURRENCY unless set", () => {
    expect(loadConfig(base).databasePoolMax).toBe(14);
    expect(loadConfig({ ...base, ONEC_MAX_CONCURRENCY: "16" }).databasePoolMax).toBe(26);
    expect(loadConfig({ ...base, ONEC_MAX_CONCURRENCY: "16", DATABASE_POOL_MAX: "40" }).databasePoolMax).toBe(40);
  });
});

describe("CONSOLE_SESSION_IDLE_MS and CONSOLE_SESSION_MAX_MS (README: 30 min and 8 h; 1 min to 30 min and to 12 h, ASVS 4.0.3 V3.3.2 level 2)", () => {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;
  it("defaults to 30 minutes idle and 8 hours in all", () => {
    expect(loadConfig(base).consoleSession).toEqual({ idleMs: 30 * MINUTE, maxMs: 8 * HOUR });
  });
  it("takes the bounds the README gives, and refuses a value past them with one line", () => {
    expect(loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(MINUTE) }).consoleSession.idleMs).toBe(MINUTE);
    expect(loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(30 * MINUTE) }).consoleSession.idleMs).toBe(
      30 * MINUTE,
    );
    expect(loadConfig({ ...base, CONSOLE_SESSION_MAX_MS: String(12 * HOUR) }).consoleSession.maxMs).toBe(12 * HOUR);
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(MINUTE - 1) })).toThrow(
      /CONSOLE_SESSION_IDLE_MS/,
    );
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(30 * MINUTE + 1) })).toThrow(
      /CONSOLE_SESSION_IDLE_MS/,
    );
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_MAX_MS: String(MINUTE - 1) })).toThrow(/CONSOLE_SESSION_MAX_MS/);
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_MAX_MS: String(12 * HOUR + 1) })).toThrow(
      /CONSOLE_SESSION_MAX_MS/,
    );
  });
});

describe("DATABASE_CLOCK (README: the database's clock unless set to node)", () => {
  it("is the database's by default, node's on request, and refuses anything else", () => {
    expect(loadConfig(base).databaseClock).toBe("database");
    expect(loadConfig({ ...base, DATABASE_CLOCK: "node" }).databaseClock).toBe("node");
    expect(() => loadConfig({ ...base, DATABASE_CLOCK: "utc" })).toThrow(/DATABASE_CLOCK/);
  });
});

describe("SHUTDOWN_DELAY_MS (README: 0 by default)", () => {
  it("is 0 unless set, and takes milliseconds up to two minutes", () => {
    expect(loadConfig(base).shutdownDelayMs).toBe(0);
    expect(loadConfig({ ...base, SHUTDOWN_DELAY_MS: "10000" }).shutdownDelayMs).toBe(10_000);
    expect(() => loadConfig({ ...base, SHUTDOWN_DELAY_MS: "-1" })).toThrow(/SHUTDOWN_DELAY_MS/);
  });
});

/**
 * README.md's configuration table, row by row: each default it gives is what
 * loadConfig fills in when the variable is unset. The values are read from
 * the table itself, so the two cannot drift apart; the names are mapped to
 * the configuration's fields here, by hand, in the table's own units.
 */
describe("README's configuration table (every default it gives)", () => {
  const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const HOUR = 3_600_000;

  /** `| \`NAME\`[, \`NAME\`] | default | meaning |` rows of the table that starts at "| variable | default |". */
  function tableRows(): Array<{ names: string[]; cell: string }> {
    const table = README.slice(README.indexOf("| variable | default | meaning |"));
    const rows: Array<{ names: string[]; cell: string }> = [];
    for (const line of table.split("\n").slice(2)) {
      if (!line.startsWith("|")) break;
      const [, names = "", cell = ""] = line.split("|").map((part) => part.trim());
      rows.push({ names: [...names.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1] as string), cell });
    }
    return rows;
  }

  /** The default as the table writes it: its first `code` span, or "unset"; undefined when it gives none of these. */
  function documentedDefault(cell: string): string | number | undefined {
    if (/^unset\b/.test(cell)) return "unset";
    const value = /^`([^`]+)`/.exec(cell)?.[1];
    if (value === undefined) return undefined;
    return /^[0-9]+$/.test(value) ? Number(value) : value;
  }

  const unset = (value: unknown) =>
    value === undefined || (Array.isArray(value) && value.length === 0) ? "unset" : JSON.stringify(value);

  /** Each variable's value in `config`, in the unit and words of the README's table. */
  const FIELDS: Record<string, (config: GatewayConfig) => string | number> = {
    PORT: (c) => c.port,
    HOST: (c) => c.host,
    DATABASE_URL: (c) => (c.database.kind === "sqlite" ? c.database.path : c.database.url),
    DATABASE_CLOCK: (c) => c.databaseClock,
    ONEC_USER: (c) => unset(c.onecUser),
    ONEC_PASSWORD: (c) => unset(c.onecPassword),
    ONEC_TIMEOUT_MS: (c) => c.onecTimeoutMs,
    SYNC_WAIT_MS: (c) => c.syncWaitMs,
    BODY_LIMIT: (c) => c.bodyLimit,
    WEBHOOK_BODY_LIMIT: (c) => c.webhookBodyLimit,
    REQUEST_TIMEOUT_MS: (c) => c.requestTimeoutMs,
    RETRY_BASE_MS: (c) => c.retryBaseMs,
    RETRY_MAX_DELAY_MS: (c) => c.retryMaxDelayMs,
    RETRY_MAX_ATTEMPTS: (c) => c.retryMaxAttempts,
    RETRY_MAX_AGE_HOURS: (c) => c.retryMaxAgeMs / HOUR,
    ONEC_ERROR_ATTEMPTS: (c) => c.onecErrorAttempts,
    MAX_UNFINISHED_ATTEMPTS: (c) => c.maxUnfinishedAttempts,
    ONEC_MAX_CONCURRENCY: (c) => c.onecMaxConcurrency,
    DELIVERY_POLL_MS: (c) => c.deliveryPollMs,
    BREAKER_FAILURES: (c) => c.breakerFailures,
    BREAKER_COOLDOWN_MS: (c) => c.breakerCooldownMs,
    BREAKER_MAX_COOLDOWN_MS: (c) => c.breakerMaxCooldownMs,
    DELIVERER: (c) => (c.deliverer ? "on" : "off"),
    ADMIN_TOKEN: (c) => unset(c.adminToken),
    OPERATORS_FILE: (c) => unset(c.operators),
    CONSOLE_SESSION_IDLE_MS: (c) => c.consoleSession.idleMs,
    CONSOLE_SESSION_MAX_MS: (c) => c.consoleSession.maxMs,
    METRICS_TOKEN: (c) => unset(c.metricsToken),
    METRICS_PORT: (c) => (c.metrics.listener.kind === "main" ? "unset" : c.metrics.listener.port),
    SENDER_TOKENS: (c) => unset(c.senders),
    SENDERS_FILE: (c) => unset(c.senders),
    SOURCES_FILE: (c) => unset(c.sources),
    ALLOW_ANONYMOUS: (c) => String(c.allowAnonymous),
    RATE_LIMIT_MAX: (c) => c.rateLimitMax,
    RATE_LIMIT_WINDOW_MS: (c) => c.rateLimitWindowMs,
    RETENTION_HOURS: (c) => c.retentionMs / HOUR,
    PURGE_INTERVAL_MS: (c) => c.purgeIntervalMs,
    TRUST_PROXY: (c) => unset(c.trustProxy),
    SHUTDOWN_DELAY_MS: (c) => c.shutdownDelayMs,
    LOG_LEVEL: (c) => c.logLevel,
  };

  /** Rows loadConfig alone does not answer for, and where they are tested instead. */
  const ELSEWHERE: Record<string, string> = {
    ONEC_URL: "required, no default: 'requires ONEC_URL unless a default is given' above",
    DATABASE_POOL_MAX: "a formula, not a value: the DATABASE_POOL_MAX describe above",
    METRICS_HOST: "only with METRICS_PORT set: the test below",
    GATEWAY_TOKEN: "the CLI's own setting (test/cli)",
    OTEL_EXPORTER_OTLP_ENDPOINT:
      "OpenTelemetry's variables, read by the tracing setup (test/observability/tracing-settings.test.ts)",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "as above",
    OTEL_TRACES_EXPORTER: "as above",
    OTEL_TRACES_SAMPLER: "as above",
    OTEL_TRACES_SAMPLER_ARG: "as above",
  };

  const rows = tableRows().flatMap(({ names, cell }) => names.map((name) => ({ name, cell })));

  it("has a row for every variable mapped here, and every row is mapped or said to be tested elsewhere", () => {
    expect(rows.length).toBeGreaterThan(40);
    const documented = rows.map((row) => row.name).sort();
    expect(documented).toEqual([...Object.keys(FIELDS), ...Object.keys(ELSEWHERE)].sort());
  });

  it.each(rows.filter((row) => FIELDS[row.name] !== undefined))(
    "$name: loadConfig fills in $cell",
    ({ name, cell }) => {
      const documented = documentedDefault(cell);
      expect(documented, `README gives ${name} no default loadConfig could fill in: ${cell}`).toBeDefined();
      expect(FIELDS[name]?.(loadConfig(base))).toBe(documented);
    },
  );

  it("METRICS_HOST: METRICS_PORT's listener is on the documented address unless set", () => {
    const row = rows.find((r) => r.name === "METRICS_HOST");
    const documented = documentedDefault(row?.cell ?? "");
    expect(documented).toBe("127.0.0.1");
    expect(loadConfig({ ...base, METRICS_PORT: "9464" }).metrics.listener).toEqual({
      kind: "own",
      host: documented,
      port: 9464,
    });
  });
});

describe("RETRY_MAX_ATTEMPTS (README: with the defaults the last attempt runs about 2 h 40 min after the first)", () => {
  it("the 24 delays between README's 25 attempts (1 s doubling, capped at 10 min, no jitter) add up to 2 h 30 min – 2 h 50 min", () => {
    // README's own rules: base 1 s, doubling per attempt, ±20 % jitter (its middle: random = 0.5), cap 10 min.
    const config = loadConfig(base);
    expect([config.retryBaseMs, config.retryMaxDelayMs, config.retryMaxAttempts]).toEqual([1000, 600_000, 25]);
    let total = 0;
    for (let made = 1; made < 25; made++) {
      total += nextAttemptDelayMs({ baseMs: 1000, maxDelayMs: 600_000 }, made, undefined, () => 0.5);
    }
    // 1 + 2 + … + 512 s (ten delays), then fourteen of 600 s: 9,423 s, 2 h 37 min.
    expect(total).toBe(9_423_000);
    expect(total).toBeGreaterThanOrEqual(150 * 60_000);
    expect(total).toBeLessThanOrEqual(170 * 60_000);
  });
});
