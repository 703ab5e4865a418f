import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.ts";
import { configuredOperators, principalOf, readOperatorsFile } from "../../src/config/operators.ts";
import { parseSenderTokens } from "../../src/config/senders.ts";
import { ADMIN, OPERATOR, tokenDigest, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

const base = { ONEC_URL: "http://1c.local/base/hs/integration" };
const ADMIN_TOKEN = "the-shared-admin-token-0123456789";
let files = 0;

/** A file of its own for each case, with `content` written as it is. */
function file(content: unknown): string {
  files += 1;
  const path = join(dir.path, `operators-${files}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const entry = (name: string, role: string, token: string) => ({ name, role, token_sha256: tokenDigest(token) });

describe("OPERATORS_FILE", () => {
  it("reads name, role and token digest, and finds each person by their token", () => {
    const path = writeOperatorsFile(dir.path, [VIEWER, OPERATOR, ADMIN]);
    const operators = readOperatorsFile(path);
    expect(operators.map(({ name, role }) => ({ name, role }))).toEqual([
      { name: "vera", role: "viewer" },
      { name: "oleg", role: "operator" },
      { name: "alla", role: "admin" },
    ]);
    expect(principalOf(VIEWER.token, operators)).toEqual({ name: "vera", role: "viewer" });
    expect(principalOf(OPERATOR.token, operators)).toEqual({ name: "oleg", role: "operator" });
    expect(principalOf(ADMIN.token, operators)).toEqual({ name: "alla", role: "admin" });
    expect(principalOf("nobody-has-this-token-0123456789", operators)).toBeUndefined();
    // The digest, not the token, is what the file holds: the digest itself is no token.
    expect(principalOf(tokenDigest(VIEWER.token), operators)).toBeUndefined();
  });

  it("accepts a digest made with the README's shell command", () => {
    const made = spawnSync("sh", ["-c", `printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1`], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TOKEN: OPERATOR.token },
      encoding: "utf8",
    });
    expect(made.status).toBe(0);
    const path = file({ operators: [{ name: "oleg", role: "operator", token_sha256: made.stdout.trim() }] });
    expect(principalOf(OPERATOR.token, readOperatorsFile(path))).toEqual({ name: "oleg", role: "operator" });
  });

  it("accepts names in any script, with dots, @ and inner spaces", () => {
    const path = file({
      operators: [
        entry("Анна Смирнова", "viewer", "token-1-0123456789"),
        entry("a.smirnova@shop.ru", "operator", "token-2-0123456789"),
      ],
    });
    expect(readOperatorsFile(path).map((o) => o.name)).toEqual(["Анна Смирнова", "a.smirnova@shop.ru"]);
  });

  it.each([
    [
      "an unknown role",
      { operators: [entry("vera", "auditor", "token-1-0123456789")] },
      /"vera".*"auditor".*viewer, operator, admin/,
    ],
    ["a role of another case", { operators: [entry("vera", "Viewer", "token-1-0123456789")] }, /"Viewer"/],
    ["a missing digest", { operators: [{ name: "vera", role: "viewer" }] }, /operators\[0\].*"vera".*token_sha256/],
    [
      "a digest that is not 64 hex",
      { operators: [{ name: "vera", role: "viewer", token_sha256: "abc" }] },
      /token_sha256/,
    ],
    [
      "a missing name",
      { operators: [{ role: "viewer", token_sha256: tokenDigest("token-1-0123456789") }] },
      /operators\[0\].*"name"/,
    ],
    ["a name with a slash", { operators: [entry("vera/ops", "viewer", "token-1-0123456789")] }, /"name"/],
    ["a name of 65 characters", { operators: [entry("v".repeat(65), "viewer", "token-1-0123456789")] }, /"name"/],
    ["no operators array", { senders: [] }, /must be \{"operators": \[\.\.\.\]\}/],
    ["an empty list", { operators: [] }, /lists no operators/],
    ["text that is not JSON", "operators: vera", /cannot be read as JSON/],
  ])("refuses %s with a line that names OPERATORS_FILE and the fault", (_case, content, message) => {
    const path = file(content);
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path })).toThrow(message);
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path })).toThrow(/^OPERATORS_FILE /);
  });

  it("refuses a file that does not exist", () => {
    expect(() => loadConfig({ ...base, OPERATORS_FILE: join(dir.path, "missing.json") })).toThrow(
      /^OPERATORS_FILE .*missing\.json cannot be read/,
    );
  });

  it("refuses one name twice", () => {
    const path = file({
      operators: [entry("vera", "viewer", "token-1-0123456789"), entry("vera", "admin", "token-2-0123456789")],
    });
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path })).toThrow(/operator "vera" is configured twice/);
  });

  it("refuses two people sharing one token", () => {
    const path = file({
      operators: [entry("vera", "viewer", "token-1-0123456789"), entry("oleg", "operator", "token-1-0123456789")],
    });
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path })).toThrow(/two operators share one token/);
  });

  it("refuses a person whose token is a sender's", () => {
    const path = file({ operators: [entry("vera", "viewer", "token-of-shop-a-0123456789")] });
    expect(() =>
      loadConfig({ ...base, OPERATORS_FILE: path, SENDER_TOKENS: "shop-a:token-of-shop-a-0123456789" }),
    ).toThrow(/operator "vera" has the token of sender "shop-a"/);
    expect(() =>
      configuredOperators({
        file: path,
        adminToken: undefined,
        senders: parseSenderTokens("shop-a:token-of-shop-a-0123456789"),
      }),
    ).toThrow(/sender "shop-a"/);
  });

  it("refuses ADMIN_TOKEN when it is someone's token in the file or a sender's", () => {
    const path = file({ operators: [entry("alla", "admin", ADMIN_TOKEN)] });
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path, ADMIN_TOKEN })).toThrow(/share one token/);
    expect(() => loadConfig({ ...base, ADMIN_TOKEN, SENDER_TOKENS: `shop-a:${ADMIN_TOKEN}` })).toThrow(
      /sender "shop-a"/,
    );
  });

  it("refuses a person named admin while ADMIN_TOKEN is the admin of that name", () => {
    const path = file({ operators: [entry("admin", "operator", "token-1-0123456789")] });
    expect(() => loadConfig({ ...base, OPERATORS_FILE: path, ADMIN_TOKEN })).toThrow(/"admin".*ADMIN_TOKEN/);
    expect(loadConfig({ ...base, OPERATORS_FILE: path }).operators.map((o) => o.name)).toEqual(["admin"]);
  });
});

describe("config.operators", () => {
  it("is empty without OPERATORS_FILE and ADMIN_TOKEN: the admin routes are off", () => {
    expect(loadConfig(base).operators).toEqual([]);
  });

  it("holds ADMIN_TOKEN as an admin named admin, and the file's people", () => {
    const path = writeOperatorsFile(dir.path, [VIEWER, OPERATOR]);
    const { operators } = loadConfig({ ...base, OPERATORS_FILE: path, ADMIN_TOKEN });
    expect(principalOf(ADMIN_TOKEN, operators)).toEqual({ name: "admin", role: "admin" });
    expect(principalOf(VIEWER.token, operators)).toEqual({ name: "vera", role: "viewer" });
    expect(principalOf(OPERATOR.token, operators)).toEqual({ name: "oleg", role: "operator" });
    expect(loadConfig({ ...base, ADMIN_TOKEN }).operators.map(({ name, role }) => ({ name, role }))).toEqual([
      { name: "admin", role: "admin" },
    ]);
  });
});
