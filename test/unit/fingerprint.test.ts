import { describe, expect, it } from "vitest";
import { canonicalizeEvent, FINGERPRINT_POLICY, fingerprintOf } from "../../src/domain/fingerprint.ts";
import { exampleEvent } from "../support/events.ts";

/** A deterministic generator, so a failure can be reproduced from its seed. */
function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shuffleKeys(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, random));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j] as [string, unknown], entries[i] as [string, unknown]];
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, random)]));
}

/** JSON text with random whitespace between every token. */
function looseStringify(value: unknown, random: () => number): string {
  const ws = () => [" ", "\n", "\t", "\r\n  ", ""][Math.floor(random() * 5)];
  if (Array.isArray(value))
    return `[${ws()}${value.map((v) => looseStringify(v, random)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (value !== null && typeof value === "object") {
    const parts = Object.entries(value).map(
      ([k, v]) => `${JSON.stringify(k)}${ws()}:${ws()}${looseStringify(v, random)}`,
    );
    return `{${ws()}${parts.join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return JSON.stringify(value);
}

/** Every leaf of the event, as a path and a way to change it. */
function leafPaths(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...path, Array.isArray(value) ? Number(k) : k]));
  }
  return [path];
}

describe("fingerprint", () => {
  const reference = canonicalizeEvent(exampleEvent()).fingerprint;

  it("is one value for 500 random key orders and whitespace layouts", () => {
    const random = rng(42);
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const text = looseStringify(shuffleKeys(exampleEvent(), random), random);
      seen.add(canonicalizeEvent(JSON.parse(text)).fingerprint);
    }
    expect([...seen]).toEqual([reference]);
  });

  it("changes when any single value changes", () => {
    const paths = leafPaths(exampleEvent());
    expect(paths.length).toBeGreaterThan(20);
    const seen = new Set<string>([reference]);
    for (const path of paths) {
      const event = exampleEvent() as unknown as Record<string | number, unknown>;
      let target = event;
      for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
      const last = path[path.length - 1] as string | number;
      const old = target[last];
      target[last] = typeof old === "number" ? old + 1 : `${String(old)}x`;
      seen.add(canonicalizeEvent(event).fingerprint);
    }
    expect(seen.size).toBe(paths.length + 1);
  });

  it("depends on the policy version", () => {
    const { text } = canonicalizeEvent(exampleEvent());
    expect(fingerprintOf(text, FINGERPRINT_POLICY)).toBe(reference);
    expect(fingerprintOf(text, "order-paid/jcs-sha256/v2")).not.toBe(reference);
  });

  it("keeps non-ASCII text as UTF-8 and sorts keys (RFC 8785)", () => {
    expect(canonicalizeEvent({ b: "Чай", a: 1.5e2 }).text).toBe('{"a":150,"b":"Чай"}');
  });

  it("refuses a lone surrogate", () => {
    expect(() => canonicalizeEvent({ a: "\ud800" })).toThrow(/surrogate/i);
  });
});
