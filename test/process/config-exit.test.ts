import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startArgs } from "../support/start-script.ts";

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
