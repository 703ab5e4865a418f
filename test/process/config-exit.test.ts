import { spawnSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { startArgs } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;

function start(env: Record<string, string>) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(ONEC_|PORT$|DATABASE_URL$|SYNC_WAIT_MS$|SENDER|ALLOW_ANONYMOUS$)/.test(name),
    ),
  );
  return spawnSync(process.execPath, startArgs(), {
    cwd: repoRoot,
    env: { ...base, ...env },
    encoding: "utf8",
    timeout: 20_000,
  });
}

describe("npm start refuses a bad configuration", { timeout: 30_000 }, () => {
  it.each([
    [{}, /^configuration error: ONEC_URL is required/],
    [{ ONEC_URL: "http://1c.test", SYNC_WAIT_MS: "soon" }, /^configuration error: SYNC_WAIT_MS must be a whole number/],
    [{ ONEC_URL: "http://1c.test" }, /^configuration error: no senders configured/],
    [{ ONEC_URL: "http://1c.test", SENDER_TOKENS: "shop-a:short" }, /^configuration error: SENDER_TOKENS entries/],
    [
      // Nothing listens on port 1: the register cannot be opened, whether or not a PostgreSQL server runs here.
      { ONEC_URL: "http://1c.test", ALLOW_ANONYMOUS: "true", DATABASE_URL: "postgres://gw@127.0.0.1:1/gw" },
      /^cannot open the register: PostgreSQL: .*ECONNREFUSED/,
    ],
  ])("exits 1 with one clear line for %j", (env, message) => {
    const result = start(env);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});

/**
 * docs/operations.md, Upgrading: while one process holds the register's file (a migration's transaction), a
 * second one starting on it gives up after the busy timeout (5 s) and exits with one line, for its
 * supervisor to start it again, instead of waiting without end or starting half-open.
 */
describe("npm start on a SQLite register another process is writing", { timeout: 30_000 }, () => {
  it("exits 1 with one line after the 5 s busy timeout", async () => {
    const dir = tempDir("gateway-busy-start-");
    const file = join(dir.path, "register.db");
    await new SqliteRegister(file).close();
    const holder = new Database(file);
    try {
      holder.exec("BEGIN IMMEDIATE");
      const started = performance.now();
      const result = start({ ONEC_URL: "http://1c.test", ALLOW_ANONYMOUS: "true", DATABASE_URL: file });
      expect(performance.now() - started).toBeGreaterThanOrEqual(5000);
      expect(result.status).toBe(1);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(/^cannot open the register: .*(busy|locked)/i);
    } finally {
      holder.close();
      dir.remove();
    }
  });
});
