import { hash } from "node:crypto";
import canonicalize from "canonicalize";
import { configure } from "safe-stable-stringify";

/**
 * Bump when the meaning of "the same event" changes (a field becomes volatile,
 * the schema admits a new shape). Rows keep the version they were taken under,
 * so an old row is never compared with a hash made by other rules.
 */
export const FINGERPRINT_POLICY = "order-paid/jcs-sha256/v1";

export interface Canonical {
  /** RFC 8785 text: the bytes stored and sent to 1C on every attempt. */
  text: string;
  fingerprint: string;
  policy: string;
}

/**
 * Throws on values RFC 8785 cannot represent (lone surrogates, NaN); callers
 * pass only parsed JSON, where that means the body was not I-JSON.
 */
export function canonicalizeEvent(value: unknown, policy: string = FINGERPRINT_POLICY): Canonical {
  const text = canonicalJson(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return { text, fingerprint: fingerprintOf(text, policy), policy };
}

/**
 * Sorted keys, strings and numbers as JSON.stringify writes them: on what
 * JSON.parse returns, safe-stable-stringify writes RFC 8785's text, at a
 * third of canonicalize's cost (it runs on every request, repeats included;
 * test/unit/canonical-json.test.ts holds the two to the same bytes). Where
 * they part is a lone surrogate: written as a \u escape here, refused by
 * RFC 8785. So text with any \u escape (rare: control characters do it too)
 * is left to canonicalize, which refuses it or writes the same text.
 */
const deterministicJson = configure({ deterministic: true, strict: true, circularValue: Error, bigint: false });

function canonicalJson(value: unknown): string | undefined {
  const text = deterministicJson(value);
  return text?.includes("\\u") ? canonicalize(value) : text;
}

/** SHA-256 of the UTF-8 bytes of `policy`, a line feed and the canonical text; one call, no Hash object. */
export function fingerprintOf(canonicalText: string, policy: string): string {
  return hash("sha256", `${policy}\n${canonicalText}`, "hex");
}
