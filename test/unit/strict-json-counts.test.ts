import { describe, expect, it } from "vitest";
import { type DecimalNumber, parseStrictJson } from "../../src/domain/strict-json.ts";

/**
 * parseStrictJson finds repeated keys by counting (members in the text
 * against members JSON.parse kept) and looks for the key only when the counts
 * differ. Checked on random documents whose repeated keys and decimal numbers
 * are known from how they were written, with the tricky text in them:
 * colons, quotes and backslashes inside strings, escaped keys, `e` in
 * literals and in numbers.
 */

function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Written {
  text: string;
  /** Whether some object was written with one key twice. */
  repeated: boolean;
  decimals: DecimalNumber[];
}

const KEYS = ["a", "b", "quantity", "a:b", 'q"t', "back\\slash", "1", "__proto__", "e", "true", "~/"];
const STRINGS = ["", "x", "a:1", '{"a":1,"a":2}', "\\", '\\"', 'say "hi"', "2.0", "1e5", "true", "é"];
const INTEGERS = ["0", "-0", "2", "-17", "100"];
const DECIMALS = ["2.0", "2e0", "20E-1", "-1.5", "1.9999999999999999", "3e+2", "0.5"];

/** A key as a sender may write it: plain, or with every letter as a \\u escape. */
function writeKey(key: string, random: () => number): string {
  const plain = JSON.stringify(key);
  return random() < 0.3 ? plain.replace(/[a-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) : plain;
}

function pointerSegment(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function write(random: () => number, pointer: string, depth: number, into: Written): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const ws = () => pick(["", " ", "\n  "]);
  // A body is an object; deeper down, anything.
  const kind = depth === 0 ? 5 : Math.floor(random() * (depth > 3 ? 4 : 6));
  if (kind === 0) return pick(["true", "false", "null"]);
  if (kind === 1) return JSON.stringify(pick(STRINGS));
  if (kind === 2) return pick(INTEGERS);
  if (kind === 3) {
    const text = pick(DECIMALS);
    into.decimals.push({ pointer, text });
    return text;
  }
  if (kind === 4) {
    const items: string[] = [];
    for (let i = 0; i < Math.floor(random() * 4); i++) items.push(write(random, `${pointer}/${i}`, depth + 1, into));
    return `[${ws()}${items.join(`,${ws()}`)}${ws()}]`;
  }
  const keys: string[] = [];
  for (let i = Math.floor(random() * 7); i > 0; i--) {
    const key = pick(KEYS);
    if (keys.includes(key)) {
      if (random() < 0.6) continue; // mostly distinct keys; now and then one written twice
      into.repeated = true;
    }
    keys.push(key);
  }
  // Decimals are compared only for documents without a repeated key, where no value is dropped.
  const members = keys.map(
    (key) =>
      `${writeKey(key, random)}${ws()}:${ws()}${write(random, `${pointer}/${pointerSegment(key)}`, depth + 1, into)}`,
  );
  return `{${ws()}${members.join(`,${ws()}`)}${ws()}}`;
}

describe("parseStrictJson on documents whose repeated keys and decimals are known", () => {
  it("refuses exactly the 4 000 random documents written with a repeated key, and reports every decimal", () => {
    const random = rng(2026);
    const wrong: string[] = [];
    let repeatedSeen = 0;
    for (let i = 0; i < 4000; i++) {
      const written: Written = { text: "", repeated: false, decimals: [] };
      written.text = write(random, "", 0, written);
      const result = parseStrictJson(written.text);
      if (written.repeated) {
        repeatedSeen += 1;
        if (result.ok || result.reason !== "duplicate-key") wrong.push(`not refused: ${written.text}`);
      } else if (!result.ok) {
        wrong.push(`refused (${result.message}): ${written.text}`);
      } else if (JSON.stringify(result.decimalNumbers) !== JSON.stringify(written.decimals)) {
        wrong.push(`decimals ${JSON.stringify(result.decimalNumbers)}: ${written.text}`);
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // The generator must have exercised both sides.
    expect(repeatedSeen).toBeGreaterThan(400);
    expect(4000 - repeatedSeen).toBeGreaterThan(1000);
  });

  it.each([
    ['{"__proto__":1,"__proto__":2}', "__proto__"],
    ['{"a":{"b":1,"b":{"c":2}}}', "b"],
    ['{"a":{"x":1},"a":{"y":1,"z":2}}', "a"],
    ['{"k\\"":1,"k\\u0022":2}', 'k"'],
  ])("names the repeated key of %s", (text, key) => {
    const result = parseStrictJson(text);
    expect(result).toMatchObject({ ok: false, reason: "duplicate-key" });
    expect(result.ok === false && result.message).toContain(`key "${key}"`);
  });

  it("counts no member in colons, quotes and backslashes inside strings", () => {
    expect(parseStrictJson('{"a":"x:y","b":"\\\\","c":"\\":","d":["::"]}')).toMatchObject({ ok: true });
  });

  it("reads a deeply nested body without recursion", () => {
    const depth = 50_000;
    const text = `${'{"a":['.repeat(depth)}1${"]}".repeat(depth)}`;
    expect(parseStrictJson(text)).toMatchObject({ ok: true, decimalNumbers: [] });
  });
});
