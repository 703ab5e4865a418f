import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.ts";

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

describe("CONSOLE_SESSION_IDLE_MS and CONSOLE_SESSION_MAX_MS (README: 30 min and 8 h; 1 min to 24 h and to 7 days)", () => {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;
  it("defaults to 30 minutes idle and 8 hours in all", () => {
    expect(loadConfig(base).consoleSession).toEqual({ idleMs: 30 * MINUTE, maxMs: 8 * HOUR });
  });
  it("takes the bounds the README gives, and refuses a value past them with one line", () => {
    expect(loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(MINUTE) }).consoleSession.idleMs).toBe(MINUTE);
    expect(loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(24 * HOUR) }).consoleSession.idleMs).toBe(24 * HOUR);
    expect(loadConfig({ ...base, CONSOLE_SESSION_MAX_MS: String(7 * 24 * HOUR) }).consoleSession.maxMs).toBe(
      7 * 24 * HOUR,
    );
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(MINUTE - 1) })).toThrow(
      /CONSOLE_SESSION_IDLE_MS/,
    );
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_IDLE_MS: String(24 * HOUR + 1) })).toThrow(
      /CONSOLE_SESSION_IDLE_MS/,
    );
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_MAX_MS: String(MINUTE - 1) })).toThrow(/CONSOLE_SESSION_MAX_MS/);
    expect(() => loadConfig({ ...base, CONSOLE_SESSION_MAX_MS: String(7 * 24 * HOUR + 1) })).toThrow(
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
