import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { checkUnique, parseSenderTokens, readSendersFile, sha256 } from "../../src/config/senders.ts";
import { senderOf } from "../../src/http/sender-auth.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

describe("sender configuration", () => {
  it("reads SENDER_TOKENS and keeps only digests", () => {
    const senders = parseSenderTokens(" shop-a:token-a-0123456789abcdef , shop-b:token-b-0123456789abcdef ");
    expect(senders.map((s) => s.id)).toEqual(["shop-a", "shop-b"]);
    expect(senders[0]?.tokenSha256.equals(sha256("token-a-0123456789abcdef"))).toBe(true);
  });

  it.each([["shop-a"], ["shop-a:short"], [":token-0123456789abcdef"], ["shop/a:token-0123456789abcdef"]])(
    "refuses %s",
    (raw) => {
      expect(() => parseSenderTokens(raw)).toThrow();
    },
  );

  it("reads SENDERS_FILE with token digests", () => {
    const file = join(dir.path, "senders.json");
    const digest = sha256("token-c-0123456789abcdef").toString("hex");
    writeFileSync(file, JSON.stringify({ senders: [{ id: "shop-c", token_sha256: digest }] }));
    const senders = readSendersFile(file);
    expect(senderOf("token-c-0123456789abcdef", senders)).toBe("shop-c");
    expect(senderOf("token-x-0123456789abcdef", senders)).toBeUndefined();
    writeFileSync(file, JSON.stringify({ senders: [{ id: "shop-c", token_sha256: "nope" }] }));
    expect(() => readSendersFile(file)).toThrow(/token_sha256/);
  });

  it("refuses a sender configured twice, or two senders sharing a token", () => {
    const twice = parseSenderTokens("a:token-0123456789abcdef,a:token-1123456789abcdef");
    expect(() => checkUnique(twice)).toThrow(/twice/);
    const shared = parseSenderTokens("a:token-0123456789abcdef,b:token-0123456789abcdef");
    expect(() => checkUnique(shared)).toThrow(/share one token/);
  });

  it("refuses a token sender and a platform's sender whose ids differ only in case, and allows one id in both", () => {
    const sourcesFile = join(dir.path, "sources-case.json");
    const source = (sender: string) => ({
      sender,
      platform: "tilda",
      secrets: ["tilda-url-token-3f9a1c7e5b2d"],
      currency: "RUB",
    });
    const env = { ONEC_URL: "http://1c", SENDER_TOKENS: "shop:token-0123456789abcdef", SOURCES_FILE: sourcesFile };
    writeFileSync(sourcesFile, JSON.stringify({ sources: [source("Shop")] }));
    expect(() => loadConfig(env)).toThrow(/"shop" and "Shop" differ only in case/);
    writeFileSync(sourcesFile, JSON.stringify({ sources: [source("shop")] }));
    expect(loadConfig(env).sources.map((configured) => configured.sender)).toEqual(["shop"]);
  });

  it("refuses two senders whose ids differ only in case: 1C's keys compare without regard to case (1c/README.md)", () => {
    const cased = parseSenderTokens("shop:token-0123456789abcdef,Shop:token-1123456789abcdef");
    expect(() => checkUnique(cased)).toThrow(/"shop" and "Shop" differ only in case/);
  });

  it("turns a bad sender setting into one configuration line", () => {
    expect(() => loadConfig({ ONEC_URL: "http://1c", SENDER_TOKENS: "x" })).toThrow(/^SENDER_TOKENS entries/);
  });
});
