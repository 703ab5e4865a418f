import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";

/**
 * Whether `header` is the base64 HMAC-SHA256 of `raw` under any of `secrets`
 * (Shopify's X-Shopify-Hmac-Sha256, WooCommerce's X-WC-Webhook-Signature).
 * Every secret is tried, each compared in constant time, so the timing says
 * nothing about which one came close. A header that is not 32 bytes of
 * base64 fails without comparing.
 */
export function isHmacSha256Base64(
  raw: Uint8Array,
  header: string | string[] | undefined,
  secrets: readonly string[],
): boolean {
  if (typeof header !== "string" || !BASE64_SHA256.test(header.trim())) return false;
  const claimed = Buffer.from(header.trim(), "base64");
  let valid = false;
  for (const key of hmacKeys(secrets)) {
    const expected = createHmac("sha256", key).update(raw).digest();
    if (timingSafeEqual(expected, claimed)) valid = true;
  }
  return valid;
}

/** A sender's secrets as keys, made once: a string key is converted anew on every createHmac. */
const keysOf = new WeakMap<readonly string[], readonly KeyObject[]>();

function hmacKeys(secrets: readonly string[]): readonly KeyObject[] {
  let keys = keysOf.get(secrets);
  if (keys === undefined) {
    keys = secrets.map((secret) => createSecretKey(secret, "utf8"));
    keysOf.set(secrets, keys);
  }
  return keys;
}

/** 32 bytes in base64: 43 characters and one "=". */
const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/** Whether `given` equals any of `secrets`, compared as SHA-256 digests in constant time (lengths never leak). */
export function isSecretToken(given: string | undefined, secrets: readonly string[]): boolean {
  if (given === undefined || given === "") return false;
  const digest = createHmac("sha256", TOKEN_KEY).update(given).digest();
  let valid = false;
  for (const secret of secrets) {
    if (timingSafeEqual(digest, createHmac("sha256", TOKEN_KEY).update(secret).digest())) valid = true;
  }
  return valid;
}

/** Any fixed key: the HMAC only brings both sides to one length before the constant-time compare. */
const TOKEN_KEY = "order-gateway/url-token";
