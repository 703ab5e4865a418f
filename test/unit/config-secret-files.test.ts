import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayConfig, loadConfig } from "../../src/config/load-config.ts";
import { SECRET_VARIABLES } from "../../src/config/secret-files.ts";
import { sha256 } from "../../src/config/senders.ts";
import { configError } from "../support/config-errors.ts";
import { tempDir } from "../support/temp.ts";

// Issue 22, finding 7: "A malformed SENDER_TOKENS prints almost the whole token to stderr.
// Secrets can only come from the environment: there is no *_FILE form."
const base = { ONEC_URL: "http://1c.test/base/hs/integration" };
const dir = tempDir("gateway-secrets-");
afterAll(() => dir.remove());

let files = 0;
/** A file holding `content`, as a secret mounted by Docker or written by an operator. */
function secretFile(content: string): string {
  const path = join(dir.path, `secret-${++files}`);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

/** Every run of 6 characters of `secret`: a message holding one has leaked part of it. */
function fragments(secret: string): string[] {
  const runs: string[] = [];
  for (let at = 0; at + 6 <= secret.length; at++) runs.push(secret.slice(at, at + 6));
  return runs;
}

function expectNoPartOf(secret: string, message: string): void {
  for (const fragment of fragments(secret)) expect(message, `"${fragment}" of the secret`).not.toContain(fragment);
}

const ADMIN = "admin-token-Qm7vX2pL9sK4";
const SHOP = "shop-token-Zr8wN3bT6yH1";
const METRICS = "metrics-token-Fj5cV8mR2dL7";

/** Each secret given directly, and what the configuration then holds. */
const SECRETS: ReadonlyArray<{
  name: (typeof SECRET_VARIABLES)[number];
  value: string;
  read: (config: GatewayConfig) => unknown;
}> = [
  { name: "ADMIN_TOKEN", value: ADMIN, read: (c) => c.adminToken },
  { name: "SENDER_TOKENS", value: `shop-a:${SHOP}`, read: (c) => c.senders },
  { name: "DATABASE_URL", value: "postgres://gateway:pg-Passw0rd-Kx4@db:5432/gateway", read: (c) => c.database },
  { name: "ONEC_USER", value: "Интеграция сайта", read: (c) => c.onecUser },
  { name: "ONEC_PASSWORD", value: "1c pass word Wq3", read: (c) => c.onecPassword },
  { name: "METRICS_TOKEN", value: METRICS, read: (c) => c.metricsToken },
];

describe("every secret as NAME_FILE (the Docker secrets and PostgreSQL image convention)", () => {
  it("covers every secret the configuration reads, and the command line's GATEWAY_TOKEN (test/cli/replay-roles.test.ts)", () => {
    expect([...SECRET_VARIABLES].sort()).toEqual([...SECRETS.map((s) => s.name), "GATEWAY_TOKEN"].sort());
  });

  it.each(SECRETS)("$name: its _FILE form gives the same configuration, a trailing newline trimmed", (secret) => {
    // A password without a user is refused (test/unit/config-silent-settings.test.ts).
    const context = secret.name === "ONEC_PASSWORD" ? { ...base, ONEC_USER: "exchange" } : base;
    const direct = secret.read(loadConfig({ ...context, [secret.name]: secret.value }));
    for (const ending of ["", "\n", "\r\n"]) {
      const fromFile = loadConfig({ ...context, [`${secret.name}_FILE`]: secretFile(`${secret.value}${ending}`) });
      expect(secret.read(fromFile)).toEqual(direct);
    }
    expect(direct).toBeDefined();
  });

  it("keeps what a password holds inside: spaces and a leading space are its own", () => {
    const config = loadConfig({ ...base, ONEC_USER: "exchange", ONEC_PASSWORD_FILE: secretFile(" two words \n") });
    expect(config.onecPassword).toBe(" two words ");
  });

  it.each(SECRETS)("$name: refused together with its _FILE form, naming both and neither value", (secret) => {
    const other = `${secret.value}-other-Tz9`;
    const error = configError({ ...base, [secret.name]: secret.value, [`${secret.name}_FILE`]: secretFile(other) });
    expect(error.message).toMatch(new RegExp(`^${secret.name}\\b.*\\b${secret.name}_FILE\\b`));
    expectNoPartOf(secret.value, error.message);
    expectNoPartOf(other, error.message);
  });

  it.each(SECRETS)(
    "$name: a _FILE naming a missing file is a configuration error naming the variable and the path",
    (secret) => {
      const path = join(dir.path, "no-such-file");
      expect(configError({ ...base, [`${secret.name}_FILE`]: path }).message).toMatch(
        new RegExp(`^${secret.name}_FILE: cannot read ${path}: ENOENT`),
      );
    },
  );

  it("an unreadable file or a directory is refused the same way", () => {
    const folder = join(dir.path, "a-folder");
    mkdirSync(folder);
    expect(configError({ ...base, ADMIN_TOKEN_FILE: folder }).message).toMatch(
      new RegExp(`^ADMIN_TOKEN_FILE: cannot read ${folder}: EISDIR`),
    );
    if (process.getuid?.() !== 0) {
      const locked = secretFile(ADMIN);
      chmodSync(locked, 0o000);
      expect(configError({ ...base, ADMIN_TOKEN_FILE: locked }).message).toMatch(
        /^ADMIN_TOKEN_FILE: cannot read .*: EACCES/,
      );
    }
  });

  it.each(SECRETS)("$name: a _FILE naming an empty file is refused, not taken as unset", (secret) => {
    const path = secretFile("\n");
    expect(configError({ ...base, [`${secret.name}_FILE`]: path }).message).toBe(
      `${secret.name}_FILE: ${path} is empty`,
    );
  });

  it("an empty NAME beside NAME_FILE is unset, as compose writes an unset variable", () => {
    expect(loadConfig({ ...base, ADMIN_TOKEN: "", ADMIN_TOKEN_FILE: secretFile(ADMIN) }).adminToken).toBe(ADMIN);
  });
});

/**
 * Malformed values holding a recognisable secret: the message names the
 * variable, and shows no part of the value, whether it came from the
 * environment or from a file.
 */
const MALFORMED: ReadonlyArray<{ name: string; value: string; secret: string; message: RegExp }> = [
  // The finding's own case: a separator other than ":" printed the entry up to its last character.
  { name: "SENDER_TOKENS", value: `shop-a=${SHOP}`, secret: SHOP, message: /^SENDER_TOKENS entries are "id:token"/ },
  { name: "SENDER_TOKENS", value: SHOP, secret: SHOP, message: /^SENDER_TOKENS entries are "id:token"/ },
  { name: "SENDER_TOKENS", value: `${SHOP}:`, secret: SHOP, message: /^SENDER_TOKENS entries are "id:token"/ },
  { name: "SENDER_TOKENS", value: `:${SHOP}`, secret: SHOP, message: /^SENDER_TOKENS entries are "id:token"/ },
  { name: "SENDER_TOKENS", value: `shop a:${SHOP}`, secret: SHOP, message: /^SENDER_TOKENS entries are "id:token"/ },
  {
    name: "SENDER_TOKENS",
    value: `shop-a:${SHOP},shop-b:Tk4short`,
    secret: "Tk4short",
    message: /^SENDER_TOKENS entries are "id:token".*entry 2 of 2/,
  },
  {
    name: "SENDER_TOKENS",
    value: `shop-a:${SHOP},shop-b:${SHOP}`,
    secret: SHOP,
    message: /^two senders share one token/,
  },
  { name: "ADMIN_TOKEN", value: "Adm1nSh0rt", secret: "Adm1nSh0rt", message: /^ADMIN_TOKEN must be at least 16/ },
  { name: "ADMIN_TOKEN", value: `${SHOP}`, secret: SHOP, message: /has the token of sender/ },
  {
    name: "METRICS_TOKEN",
    value: "M3tr1csSh0rt",
    secret: "M3tr1csSh0rt",
    message: /^METRICS_TOKEN must be at least 16/,
  },
  { name: "METRICS_TOKEN", value: SHOP, secret: SHOP, message: /^METRICS_TOKEN is the token of sender/ },
  { name: "METRICS_TOKEN", value: ADMIN, secret: ADMIN, message: /^METRICS_TOKEN is an operator's token/ },
  { name: "DATABASE_URL", value: "sqlite:", secret: "sqlite:", message: /^DATABASE_URL must name a SQLite file/ },
  {
    name: "ONEC_USER",
    value: "gate:way-Uq7Hn2",
    secret: "gate:way-Uq7Hn2",
    message: /^ONEC_USER must not contain ":"/,
  },
];

describe("no configuration error shows any part of a secret", () => {
  const context = { SENDER_TOKENS: `shop-z:${"z".repeat(20)}` };
  it.each(MALFORMED)("$name=$value, given directly or as a file", ({ name, value, secret, message }) => {
    const others =
      name === "ADMIN_TOKEN" || name === "METRICS_TOKEN"
        ? { SENDER_TOKENS: `shop-a:${SHOP}`, ...(name === "METRICS_TOKEN" ? { ADMIN_TOKEN: ADMIN } : {}) }
        : name === "SENDER_TOKENS"
          ? {}
          : context;
    for (const env of [
      { ...base, ...others, [name]: value },
      { ...base, ...others, [`${name}_FILE`]: secretFile(`${value}\n`) },
    ]) {
      const error = configError(env);
      expect(error.message).toMatch(message);
      if (secret !== "sqlite:") expectNoPartOf(secret, error.message);
    }
  });

  it("ONEC_URL carrying a password is refused without showing it, even when it is no http(s) URL", () => {
    for (const url of ["http://gw:0nec-Pa55-Yt6@1c.test", "ftp://gw:0nec-Pa55-Yt6@1c.test", "gw:0nec-Pa55-Yt6@1c"]) {
      const error = configError({ ONEC_URL: url });
      expect(error.message).toMatch(/^ONEC_URL/);
      expectNoPartOf("0nec-Pa55-Yt6", error.message);
    }
  });

  it("keeps naming the sender of a duplicate id, which is no secret", () => {
    expect(configError({ ...base, SENDER_TOKENS: `shop-a:${SHOP},shop-a:${ADMIN}` }).message).toBe(
      'sender "shop-a" is configured twice',
    );
  });
});

describe("SENDER_TOKENS still takes what it took", () => {
  it("hashes each token, ids as given", () => {
    expect(loadConfig({ ...base, SENDER_TOKENS: ` shop-a:${SHOP} , shop.b_2:${ADMIN}` }).senders).toEqual([
      { id: "shop-a", tokenSha256: sha256(SHOP) },
      { id: "shop.b_2", tokenSha256: sha256(ADMIN) },
    ]);
  });
});
