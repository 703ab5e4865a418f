import { hash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseJsonText } from "./json-text.ts";

/**
 * Who may send events. Tokens are kept only as SHA-256 digests: SENDER_TOKENS
 * is hashed at start, SENDERS_FILE holds digests already, so the file can be
 * shared with operators without sharing the tokens.
 */
export interface SenderEntry {
  readonly id: string;
  readonly tokenSha256: Buffer;
}

export const SENDER_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export class SenderConfigError extends Error {
  override readonly name = "SenderConfigError";
}

/** One call, no Hash object: it runs for every request a sender makes. */
export function sha256(text: string): Buffer {
  return hash("sha256", text, "buffer");
}

/**
 * `shop-a:token1,shop-b:token2`. A refusal names the entry by its place, never
 * by its text: a mistyped separator leaves the token where the id should be.
 */
export function parseSenderTokens(raw: string): SenderEntry[] {
  const parts = raw
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  return parts.map((part, index) => {
    const colon = part.indexOf(":");
    const id = part.slice(0, colon);
    const token = part.slice(colon + 1);
    if (colon <= 0 || !SENDER_ID_PATTERN.test(id) || token.length < 16) {
      throw new SenderConfigError(
        `SENDER_TOKENS entries are "id:token", an id of 1-64 characters of A-Z a-z 0-9 . _ - and a token of at least 16 characters; entry ${index + 1} of ${parts.length} is not (not shown: it holds a token)`,
      );
    }
    return entry(id, sha256(token));
  });
}

/**
 * Finds the sender a token belongs to. Compares the token's digest with every
 * sender's, always all of them, in constant time: the answer's timing says
 * nothing about which digest came close. The one lookup for the senders' API
 * and the configuration's own checks, as principalOf is for people.
 */
export function senderOf(token: string, senders: readonly SenderEntry[]): string | undefined {
  const digest = sha256(token);
  let found: string | undefined;
  for (const sender of senders) {
    if (timingSafeEqual(digest, sender.tokenSha256) && found === undefined) found = sender.id;
  }
  return found;
}

/** `{"senders": [{"id": "shop-a", "token_sha256": "<64 hex>"}]}` */
export function readSendersFile(path: string): SenderEntry[] {
  let parsed: unknown;
  try {
    parsed = parseJsonText(readFileSync(path, "utf8"));
  } catch (error) {
    throw new SenderConfigError(`SENDERS_FILE ${path} cannot be read as JSON: ${(error as Error).message}`);
  }
  const senders = (parsed as { senders?: unknown })?.senders;
  if (!Array.isArray(senders)) throw new SenderConfigError(`SENDERS_FILE ${path} must be {"senders": [...]}`);
  return senders.map((item, index) => {
    const { id, token_sha256: digest } = (item ?? {}) as { id?: unknown; token_sha256?: unknown };
    if (typeof id !== "string" || typeof digest !== "string" || !/^[0-9a-f]{64}$/i.test(digest)) {
      throw new SenderConfigError(`SENDERS_FILE ${path}: senders[${index}] needs "id" and a 64-hex "token_sha256"`);
    }
    return entry(id, Buffer.from(digest, "hex"));
  });
}

export function checkUnique(senders: readonly SenderEntry[]): readonly SenderEntry[] {
  const seen = new Set<string>();
  const digests = new Set<string>();
  for (const sender of senders) {
    if (seen.has(sender.id)) throw new SenderConfigError(`sender "${sender.id}" is configured twice`);
    const digest = sender.tokenSha256.toString("hex");
    if (digests.has(digest)) throw new SenderConfigError(`two senders share one token (one is "${sender.id}")`);
    seen.add(sender.id);
    digests.add(digest);
  }
  checkCaseDistinct(senders.map((sender) => sender.id));
  return senders;
}

/**
 * Every sender id, whether it sends with a token or through a platform's
 * webhook (SOURCES_FILE), distinct in lower case: 1C compares its
 * idempotency keys (<sender>~<event_id>) without regard to case, so "shop"
 * and "Shop" would share 1C's records, and one shop's order would answer the
 * other's event (two WooCommerce shops both have an order 1001). One id may
 * appear in several places: a shop may send with a token and a webhook too.
 */
export function checkCaseDistinct(ids: readonly string[]): void {
  const byFolded = new Map<string, string>();
  for (const id of ids) {
    const twin = byFolded.get(id.toLowerCase());
    if (twin !== undefined && twin !== id) {
      throw new SenderConfigError(
        `senders "${twin}" and "${id}" differ only in case: 1C compares its keys without regard to case`,
      );
    }
    byFolded.set(id.toLowerCase(), id);
  }
}

function entry(id: string, tokenSha256: Buffer): SenderEntry {
  if (!SENDER_ID_PATTERN.test(id)) {
    throw new SenderConfigError(`sender id "${id}" must be 1-64 characters of A-Z a-z 0-9 . _ -`);
  }
  return { id, tokenSha256 };
}
