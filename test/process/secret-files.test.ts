import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { call, postEvent } from "../support/http.ts";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { startArgs } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";

// Issue 22, finding 7: "A malformed SENDER_TOKENS prints almost the whole token to stderr.
// Secrets can only come from the environment: there is no *_FILE form."
const repoRoot = new URL("../../", import.meta.url).pathname;
const SHOP = "shop-token-Zr8wN3bT6yH1";
const ADMIN = "admin-token-Qm7vX2pL9sK4";
const METRICS = "metrics-token-Fj5cV8mR2dL7";
const ONEC_USER = "Интеграция";
const ONEC_PASSWORD = "1c-Passw0rd-Wq3";
const SECRETS = [SHOP, ADMIN, METRICS, ONEC_PASSWORD];

const dir = tempDir("gateway-secret-files-");
afterAll(() => dir.remove());

/** A secret file as Docker mounts one: owner-only, a trailing newline. */
function secretFile(name: string, value: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, `${value}\n`, { mode: 0o400 });
  return path;
}

/** Every gateway variable of this process's environment removed: only what a test gives counts. */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined &&
      !/^(ONEC_|PORT$|HOST$|DATABASE_URL|SENDER|ADMIN_TOKEN|METRICS_|ALLOW_ANONYMOUS$|OPERATORS_FILE$)/.test(entry[0]),
  );
  return { ...Object.fromEntries(inherited), ...env };
}

describe("the built gateway with every secret from a file", { timeout: 60_000 }, () => {
  let onec: OnecEmulator;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    // 1C that takes only these credentials: a delivery proves ONEC_USER_FILE and ONEC_PASSWORD_FILE were read.
    onec = await startOnecEmulator({ user: ONEC_USER, password: ONEC_PASSWORD });
    gateway = await spawnGateway(
      cleanEnv({
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "info",
        ONEC_URL: onec.url,
        SYNC_WAIT_MS: "5000",
        ALLOW_ANONYMOUS: "false",
        SENDER_TOKENS_FILE: secretFile("sender-tokens", `shop-a:${SHOP}`),
        ADMIN_TOKEN_FILE: secretFile("admin-token", ADMIN),
        METRICS_TOKEN_FILE: secretFile("metrics-token", METRICS),
        ONEC_USER_FILE: secretFile("onec-user", ONEC_USER),
        ONEC_PASSWORD_FILE: secretFile("onec-password", ONEC_PASSWORD),
        DATABASE_URL_FILE: secretFile("database-url", join(dir.path, "gateway.db")),
      }),
    );
  });
  afterAll(async () => {
    await gateway?.kill();
    await onec?.close();
  });

  it("takes a sender's event with the token from SENDER_TOKENS_FILE and delivers it with 1C's credentials from files", async () => {
    const event = orderPaidEvent();
    expect((await postEvent(gateway.url, event)).status).toBe(401);
    const answer = await postEvent(gateway.url, event, { authorization: `Bearer ${SHOP}` });
    expect(answer.status, answer.text).toBe(201);
    expect(onec.orders()).toHaveLength(1);
  });

  it("opens the admin API to ADMIN_TOKEN_FILE's token and /metrics to METRICS_TOKEN_FILE's", async () => {
    const admin = await call(`${gateway.url}/integration/v1/admin/events`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(admin.status).toBe(200);
    expect((await call(`${gateway.url}/metrics`)).status).toBe(401);
    const metrics = await call(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^gateway_events_accepted_total\{sender="shop-a"\} 1$/m);
  });

  it("keeps the secrets out of its environment and its log", () => {
    const pid = gateway.child.pid;
    if (pid === undefined) throw new Error("no pid");
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
    for (const secret of SECRETS) {
      expect(environ).not.toContain(secret);
      expect(gateway.output.join("\n")).not.toContain(secret);
    }
  });
});

describe("the built gateway refusing a secret", { timeout: 60_000 }, () => {
  function start(env: Record<string, string>) {
    return spawnSync(process.execPath, startArgs(), {
      cwd: repoRoot,
      env: cleanEnv({ ONEC_URL: "http://1c.test", ...env }),
      encoding: "utf8",
      timeout: 20_000,
    });
  }

  it.each([
    // The finding's case: a separator other than ":" printed all but the token's last character.
    [
      "SENDER_TOKENS",
      { SENDER_TOKENS: `shop-a=${SHOP}` },
      /^configuration error: SENDER_TOKENS entries are "id:token"/,
    ],
    [
      "SENDER_TOKENS_FILE",
      { SENDER_TOKENS_FILE: secretFile("malformed-senders", `shop-a;${SHOP}`) },
      /^configuration error: SENDER_TOKENS entries are "id:token"/,
    ],
    [
      "ADMIN_TOKEN and ADMIN_TOKEN_FILE",
      { ALLOW_ANONYMOUS: "true", ADMIN_TOKEN: ADMIN, ADMIN_TOKEN_FILE: secretFile("admin-again", ADMIN) },
      /^configuration error: ADMIN_TOKEN and ADMIN_TOKEN_FILE are both set/,
    ],
    [
      "METRICS_TOKEN_FILE naming a missing file",
      { ALLOW_ANONYMOUS: "true", METRICS_TOKEN_FILE: join(dir.path, "missing") },
      /^configuration error: METRICS_TOKEN_FILE: cannot read .*missing: ENOENT\n?$/,
    ],
    [
      "ONEC_PASSWORD in ONEC_URL",
      { ALLOW_ANONYMOUS: "true", ONEC_URL: `ftp://gw:${ONEC_PASSWORD}@1c.test` },
      /^configuration error: ONEC_URL must not carry credentials/,
    ],
    [
      "a DATABASE_URL_FILE the driver cannot parse",
      {
        ALLOW_ANONYMOUS: "true",
        DATABASE_URL_FILE: secretFile("database-url-bad", `postgres://gw:${ONEC_PASSWORD}@127.0.0.1:99999/gw`),
      },
      /^configuration error: DATABASE_URL/,
    ],
  ])("%s: exits 1 with one line that shows no part of any secret", (_case, env, message) => {
    const result = start(env);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    for (const secret of SECRETS) {
      for (let at = 0; at + 6 <= secret.length; at++) {
        expect(result.stderr + result.stdout).not.toContain(secret.slice(at, at + 6));
      }
    }
  });
});
