import { readFileSync } from "node:fs";
import { PLATFORMS, type Platform, type SourceSettings } from "../sources/port.ts";
import { parseJsonText } from "./json-text.ts";
import { SENDER_ID_PATTERN } from "./senders.ts";

/**
 * The platforms whose native webhooks the gateway takes (SOURCES_FILE), one
 * entry per sender and platform:
 *
 *   {"sources": [{"sender": "shop-a", "platform": "shopify",
 *                 "secrets": ["<the app's client secret>"], "shop_domain": "shop-a.myshopify.com",
 *                 "currency": "RUB", "skus": {"TEA-OOLONG": "TEA-001"},
 *                 "shipping_methods": {"courier": "courier"}}]}
 *
 * The file holds the platforms' secrets in clear (an HMAC needs the key
 * itself, not a digest of it): keep it readable by the gateway only, or give
 * each secret as `secret_files`, paths of files holding one secret each
 * (Docker and compose secrets). Two secrets verify during a rotation.
 */
export class SourceConfigError extends Error {
  override readonly name = "SourceConfigError";
}

/** A shorter secret can be guessed; Tilda's is its URL's only protection. */
export const MIN_SECRET_LENGTH = 16;

export function readSourcesFile(path: string, read: (path: string) => string = readText): SourceSettings[] {
  let parsed: unknown;
  try {
    parsed = parseJsonText(read(path));
  } catch (error) {
    throw new SourceConfigError(`SOURCES_FILE ${path} cannot be read as JSON: ${(error as Error).message}`);
  }
  const sources = (parsed as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(sources)) throw new SourceConfigError(`SOURCES_FILE ${path} must be {"sources": [...]}`);
  const settings = sources.map((item, index) => sourceSettings(item, `SOURCES_FILE ${path}: sources[${index}]`, read));
  const seen = new Set<string>();
  for (const { sender, platform } of settings) {
    if (seen.has(`${platform}/${sender}`)) {
      throw new SourceConfigError(`SOURCES_FILE ${path}: ${platform} for sender "${sender}" is configured twice`);
    }
    seen.add(`${platform}/${sender}`);
  }
  return settings;
}

const KNOWN_FIELDS = new Set([
  "sender",
  "platform",
  "secrets",
  "secret_files",
  "currency",
  "skus",
  "shipping_methods",
  "shop_domain",
  "money",
  "accept_test_orders",
]);

function sourceSettings(item: unknown, where: string, read: (path: string) => string): SourceSettings {
  if (typeof item !== "object" || item === null || Array.isArray(item))
    throw new SourceConfigError(`${where} must be an object`);
  const fields = item as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !KNOWN_FIELDS.has(name));
  // A misspelt "sku" would silently pass every SKU through: refuse what we do not know.
  if (unknown !== undefined) throw new SourceConfigError(`${where} has an unknown field "${unknown}"`);
  const { sender, platform } = fields;
  if (typeof sender !== "string" || !SENDER_ID_PATTERN.test(sender)) {
    throw new SourceConfigError(`${where}: "sender" must be 1-64 characters of A-Z a-z 0-9 . _ -`);
  }
  if (typeof platform !== "string" || !PLATFORMS.includes(platform as Platform)) {
    throw new SourceConfigError(`${where}: "platform" must be one of ${PLATFORMS.join(", ")}`);
  }
  const secrets = [
    ...strings(fields.secrets, `${where}.secrets`),
    ...secretFiles(fields.secret_files, `${where}.secret_files`, read),
  ];
  if (secrets.length === 0) throw new SourceConfigError(`${where} needs "secrets" or "secret_files"`);
  if (secrets.some((secret) => secret.length < MIN_SECRET_LENGTH)) {
    throw new SourceConfigError(`${where}: every secret must be at least ${MIN_SECRET_LENGTH} characters (not shown)`);
  }
  const currency = optionalString(fields.currency, `${where}.currency`);
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency)) {
    throw new SourceConfigError(`${where}: "currency" must be an ISO 4217 code such as RUB`);
  }
  if (platform === "tilda" && currency === undefined) {
    throw new SourceConfigError(`${where}: Tilda's payload names no currency: set "currency"`);
  }
  const money = optionalString(fields.money, `${where}.money`);
  if (money !== undefined && money !== "shop" && money !== "presentment") {
    throw new SourceConfigError(`${where}: "money" must be "shop" or "presentment"`);
  }
  if (fields.accept_test_orders !== undefined && typeof fields.accept_test_orders !== "boolean") {
    throw new SourceConfigError(`${where}: "accept_test_orders" must be true or false`);
  }
  return {
    sender,
    platform: platform as Platform,
    secrets,
    currency,
    skus: stringMap(fields.skus, `${where}.skus`),
    shippingMethods: stringMap(fields.shipping_methods, `${where}.shipping_methods`),
    shopDomain: optionalString(fields.shop_domain, `${where}.shop_domain`)?.toLowerCase(),
    money,
    acceptTestOrders: fields.accept_test_orders === true,
  };
}

function strings(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item === "")) {
    throw new SourceConfigError(`${where} must be a list of non-empty strings`);
  }
  return value as string[];
}

function secretFiles(value: unknown, where: string, read: (path: string) => string): string[] {
  return strings(value, where).map((path) => {
    let secret: string;
    try {
      secret = read(path).trim();
    } catch (error) {
      throw new SourceConfigError(
        `${where}: ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
    if (secret === "") throw new SourceConfigError(`${where}: ${path} is empty`);
    return secret;
  });
}

function optionalString(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw new SourceConfigError(`${where} must be a non-empty string`);
  return value;
}

function stringMap(value: unknown, where: string): ReadonlyMap<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new SourceConfigError(`${where} must be an object of strings`);
  }
  const entries = Object.entries(value);
  for (const [key, mapped] of entries) {
    if (typeof mapped !== "string" || mapped === "" || mapped.length > 128) {
      throw new SourceConfigError(`${where}["${key}"] must be a string of 1-128 characters`);
    }
  }
  return new Map(entries as [string, string][]);
}

function readText(path: string): string {
  return readFileSync(path, "utf8");
}
