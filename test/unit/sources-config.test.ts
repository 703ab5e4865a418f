import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.ts";
import { readSourcesFile } from "../../src/config/sources.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

let files = 0;
function sourcesFile(content: unknown): string {
  files += 1;
  const path = join(dir.path, `sources-${files}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const SECRET = "shpss_0123456789abcdef0123";

describe("SOURCES_FILE: the platforms' webhooks per sender", () => {
  it("reads each platform's settings, with maps and secrets from files", () => {
    const secretFile = join(dir.path, "tilda-secret");
    writeFileSync(secretFile, "tilda-url-secret-0123456789\n");
    const path = sourcesFile({
      sources: [
        {
          sender: "shop-a",
          platform: "shopify",
          secrets: [SECRET, `${SECRET}-old`],
          shop_domain: "Shop-A.myshopify.com",
          currency: "RUB",
          money: "presentment",
          accept_test_orders: true,
          skus: { "TEA-OOLONG": "TEA-001" },
          shipping_methods: { courier: "courier-msk" },
        },
        { sender: "shop-a", platform: "tilda", secret_files: [secretFile], currency: "RUB" },
      ],
    });
    const [shopify, tilda] = readSourcesFile(path);
    expect(shopify).toMatchObject({
      sender: "shop-a",
      platform: "shopify",
      secrets: [SECRET, `${SECRET}-old`],
      shopDomain: "shop-a.myshopify.com",
      currency: "RUB",
      money: "presentment",
      acceptTestOrders: true,
    });
    expect(shopify?.skus?.get("TEA-OOLONG")).toBe("TEA-001");
    expect(shopify?.shippingMethods?.get("courier")).toBe("courier-msk");
    // The file's trailing newline is no part of the secret: editors add one.
    expect(tilda?.secrets).toEqual(["tilda-url-secret-0123456789"]);
  });

  it.each([
    ["no list", { senders: [] }, /must be \{"sources"/],
    ["an unknown platform", { sources: [{ sender: "a", platform: "ozon", secrets: [SECRET] }] }, /platform/],
    ["no secret", { sources: [{ sender: "a", platform: "shopify" }] }, /secrets/],
    ["a short secret", { sources: [{ sender: "a", platform: "shopify", secrets: ["short"] }] }, /at least 16/],
    ["Tilda without a currency", { sources: [{ sender: "a", platform: "tilda", secrets: [SECRET] }] }, /currency/],
    [
      "a bad currency",
      { sources: [{ sender: "a", platform: "shopify", secrets: [SECRET], currency: "rub" }] },
      /ISO 4217/,
    ],
    [
      "a misspelt field",
      { sources: [{ sender: "a", platform: "shopify", secrets: [SECRET], sku: {} }] },
      /unknown field "sku"/,
    ],
    ["a bad sender id", { sources: [{ sender: "shop/a", platform: "shopify", secrets: [SECRET] }] }, /sender/],
    [
      "one platform twice for a sender",
      {
        sources: [
          { sender: "a", platform: "shopify", secrets: [SECRET] },
          { sender: "a", platform: "shopify", secrets: [`${SECRET}x`] },
        ],
      },
      /twice/,
    ],
    [
      "an empty SKU mapping",
      { sources: [{ sender: "a", platform: "shopify", secrets: [SECRET], skus: { x: "" } }] },
      /skus/,
    ],
  ])("refuses %s", (_name, content, message) => {
    expect(() => readSourcesFile(sourcesFile(content))).toThrow(message);
  });

  it("never shows a secret in a refusal", () => {
    const path = sourcesFile({ sources: [{ sender: "a", platform: "shopify", secrets: ["short-secret"] }] });
    expect(() => readSourcesFile(path)).toThrow(/not shown/);
    try {
      readSourcesFile(path);
    } catch (error) {
      expect((error as Error).message).not.toContain("short-secret");
    }
  });

  it("is a ConfigError through loadConfig, naming the file", () => {
    const path = sourcesFile("{ not json");
    expect(() => loadConfig({ ONEC_URL: "http://1c.example/hs", SOURCES_FILE: path })).toThrow(ConfigError);
    expect(() => loadConfig({ ONEC_URL: "http://1c.example/hs", SOURCES_FILE: path })).toThrow(path);
  });

  it("is empty without SOURCES_FILE", () => {
    expect(loadConfig({ ONEC_URL: "http://1c.example/hs" }).sources).toEqual([]);
  });
});
