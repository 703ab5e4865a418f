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
  const text = isInCanonicalOrder(value) ? JSON.stringify(value) : deterministicJson(value);
  return text?.includes("\\u") ? canonicalize(value) : text;
}

/**
 * Whether JSON.stringify already writes `value` as the sorted writer would:
 * every object's keys come in RFC 8785's order (UTF-16 code units, as `<`
 * compares) in the order JSON.stringify visits them, and every value is
 * JSON's own (plain objects, arrays, strings, finite numbers, booleans,
 * null). The platforms' adapters build their events so, and JSON.stringify
 * writes one at a fifth of the sorted writer's cost. A sender's body rarely
 * is: its first key out of order ends the walk. Anything unusual (another
 * prototype, undefined, a value past WALK_BUDGET) goes to the sorted writer.
 */
function isInCanonicalOrder(value: unknown): boolean {
  const pending: unknown[] = [value];
  for (let budget = WALK_BUDGET; pending.length > 0; budget--) {
    if (budget === 0) return false;
    const next = pending.pop();
    switch (typeof next) {
      case "string":
      case "boolean":
        continue;
      case "number":
        if (!Number.isFinite(next)) return false;
        continue;
      case "object": {
        if (next === null) continue;
        if (Array.isArray(next)) {
          for (const item of next) pending.push(item);
          continue;
        }
        if (Object.getPrototypeOf(next) !== Object.prototype) return false;
        let previous: string | undefined;
        for (const key in next) {
          if (previous !== undefined && !(previous < key)) return false;
          previous = key;
          pending.push((next as Record<string, unknown>)[key]);
        }
        continue;
      }
      default:
        return false;
    }
  }
  return true;
}

/** Values walked at most: a large order's event has a few thousand; past that the sorted writer is as good. */
const WALK_BUDGET = 10_000;

/** SHA-256 of the UTF-8 bytes of `policy`, a line feed and the canonical text; one call, no Hash object. */
export function fingerprintOf(canonicalText: string, policy: string): string {
  return hash("sha256", `${policy}\n${canonicalText}`, "hex");
}
