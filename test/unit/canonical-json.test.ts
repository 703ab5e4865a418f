import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalizeEvent } from "../../src/domain/fingerprint.ts";
import { exampleEvent } from "../support/events.ts";
import { rng } from "../support/random.ts";

/**
 * The canonical text must be RFC 8785's, byte for byte: stored fingerprints
 * and the bytes 1C receives depend on it. The reference is the `canonicalize`
 * package (by one of RFC 8785's authors) and the vector
 * from ../shared/reference/idempotency.md, checked there on two libraries.
 */

// Keys and strings that sort or escape differently: digits (V8 puts integer keys first), case, astral
// characters (UTF-16 order differs from code-point order), controls, quotes, backslashes, a literal "\u".
const TEXTS = [
  "a",
  "A",
  "b",
  "10",
  "9",
  "",
  "€",
  "\r",
  "ö",
  "😀",
  "\uffff",
  "\ud83d\ude00x",
  "\u0001",
  '"',
  "\\",
  "\\u0041",
  "ключ",
  "é",
  "e\u0301",
];
const NUMBERS = [
  0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, 4.35, 0.000001,
  333333333.3333333, -1.5e-10,
];

function randomJson(random: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const kind = depth > 3 ? Math.floor(random() * 4) : Math.floor(random() * 6);
  switch (kind) {
    case 0:
      return pick(NUMBERS);
    case 1:
      return pick(TEXTS) + pick(TEXTS);
    case 2:
      return pick([true, false, null]);
    case 3:
      return random() * 10 ** Math.floor(random() * 30 - 15);
    case 4:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 6); i > 0; i--)
        object[pick(TEXTS) + pick(TEXTS)] = randomJson(random, depth + 1);
      return object;
    }
  }
}

describe("canonical JSON (RFC 8785)", () => {
  it("writes the reference's vector: UTF-16 key order, integer-like keys not first, 1e+21, -0 as 0", () => {
    const value = JSON.parse('{"b":1,"10":2,"9":3,"a":{"€":1,"\\r":2,"1":3},"n":1e21,"f":0.1,"neg":-0}');
    expect(canonicalizeEvent(value).text).toBe(
      '{"10":2,"9":3,"a":{"\\r":2,"1":3,"€":1},"b":1,"f":0.1,"n":1e+21,"neg":0}',
    );
  });

  it("writes RFC 8785's own examples: section 3.2.2's input as section 3.2.3's output", () => {
    const value = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`);
    expect(canonicalizeEvent(value).text).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it("sorts keys as RFC 8785 section 3.2.3's example: by UTF-16 code units, not code points", () => {
    const value = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`);
    // The RFC's order: \r, 1, U+0080, ö, €, 😀 (U+D83D U+DE00), then U+FB33; U+0080 is written as is.
    expect(canonicalizeEvent(value).text).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it("writes exactly canonicalize's text for 5000 random JSON values and the example event", () => {
    const random = rng(8785);
    const values = [exampleEvent(), ...Array.from({ length: 5000 }, () => randomJson(random, 0))];
    // Through JSON text and back: the gateway canonicalises only what JSON.parse returned.
    const differing = values
      .map((value) => JSON.parse(JSON.stringify(value)) as unknown)
      .filter((value) => canonicalizeEvent(value).text !== canonicalize(value));
    expect(differing).toEqual([]);
  });

  it("writes canonicalize's text for 5000 random values whose keys already come sorted (JSON.stringify's path)", () => {
    const random = rng(3339);
    const sorted = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(sorted);
      if (typeof value !== "object" || value === null) return value;
      const keys = Object.keys(value).sort();
      return Object.fromEntries(keys.map((key) => [key, sorted((value as Record<string, unknown>)[key])]));
    };
    const values = Array.from({ length: 5000 }, () => sorted(JSON.parse(JSON.stringify(randomJson(random, 0)))));
    // Most of these take the shortcut; integer-like keys ("10" before "9") still come out of order and do not.
    const shortcut = values.filter((value) => JSON.stringify(value) === canonicalize(value));
    expect(shortcut.length).toBeGreaterThan(4000);
    expect(values.filter((value) => canonicalizeEvent(value).text !== canonicalize(value))).toEqual([]);
  });

  it("leaves to the sorted writer what JSON.stringify would write otherwise: undefined, NaN, toJSON, another prototype", () => {
    expect(canonicalizeEvent({ a: 1, b: undefined, c: 2 }).text).toBe('{"a":1,"c":2}');
    expect(() => canonicalizeEvent({ a: Number.NaN })).toThrow();
    expect(() => canonicalizeEvent({ a: [1, Number.POSITIVE_INFINITY] })).toThrow();
    expect(canonicalizeEvent({ a: { toJSON: () => ({ z: 1, y: 2 }) } }).text).toBe('{"a":{"y":2,"z":1}}');
    class Point {
      y = 2;
      x = 1;
    }
    expect(canonicalizeEvent({ p: new Point() }).text).toBe('{"p":{"x":1,"y":2}}');
    expect(canonicalizeEvent({ a: "\u0001", b: "\ud83d\ude00" }).text).toBe(
      canonicalize({ a: "\u0001", b: "\ud83d\ude00" }),
    );
  });

  it("refuses a lone surrogate, escaped in the body, as canonicalize does", () => {
    const value = JSON.parse('{"a":"x\\ud800y"}');
    expect(() => canonicalize(value)).toThrow();
    expect(() => canonicalizeEvent(value)).toThrow(/surrogate/i);
  });
});
