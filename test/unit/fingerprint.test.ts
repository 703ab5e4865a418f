import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalizeEvent, FINGERPRINT_POLICY, fingerprintOf } from "../../src/domain/fingerprint.ts";
import { exampleEvent } from "../support/events.ts";
import { rng } from "../support/random.ts";

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

/**
 * The documented format (docs/architecture.md, src/domain/fingerprint.ts): SHA-256, in lowercase hex, of
 * the UTF-8 bytes of the policy version, a line feed (0x0a) and the RFC 8785 canonical text. Stored rows
 * are compared with it, so a change of hash, separator or encoding must fail here, not pass unnoticed.
 */
function documentedFingerprint(canonicalText: string, policy: string): string {
  return createHash("sha256")
    .update(Buffer.from(`${policy}\n${canonicalText}`, "utf8"))
    .digest("hex");
}

describe("fingerprint", () => {
  // The example event's fingerprint by the documented format over the reference canonicalizer's text
  // (the `canonicalize` package, by one of RFC 8785's authors), not by the code under test.
  const reference = documentedFingerprint(canonicalize(exampleEvent()) as string, "order-paid/jcs-sha256/v1");

  it("is the documented hash: known answers computed outside the code (sha256sum over the literal bytes)", () => {
    expect(FINGERPRINT_POLICY).toBe("order-paid/jcs-sha256/v1");
    // Canonical text written by hand (RFC 8785: keys sorted, 1.5e2 written as 150, UTF-8 kept as is);
    // digest from `printf 'order-paid/jcs-sha256/v1\n{"a":150,"b":"Чай"}' | sha256sum`.
    const small = canonicalizeEvent({ b: "Чай", a: 1.5e2 });
    expect(small.text).toBe('{"a":150,"b":"Чай"}');
    expect(small.policy).toBe("order-paid/jcs-sha256/v1");
    expect(small.fingerprint).toBe("0d2d59ec776058b270cc438ff914c628aa4ad68f8090c5de274d646c127b8db8");
    expect(documentedFingerprint('{"a":150,"b":"Чай"}', "order-paid/jcs-sha256/v1")).toBe(small.fingerprint);
    // Not the bare text's hash (281d2f3f…): the policy and its line feed come first.
    expect(small.fingerprint).not.toBe("281d2f3f79df3784809e7be49b31ce6601a3027fa4fe645c6bbbb66e9091a151");

    // RFC 8785 section 3.2.2's input; its canonical text is section 3.2.3's output, and the digest is
    // sha256sum over the policy, a line feed and those bytes.
    const rfc = canonicalizeEvent(
      JSON.parse(String.raw`{
        "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
        "literals": [null, true, false]
      }`),
    );
    expect(rfc.text).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
    expect(rfc.fingerprint).toBe("92733de1148a44da437b9644bbca5aa6bb24cba7d09ae13bbdbefa14a83289d3");
  });

  it("is the documented hash of the example event's RFC 8785 text", () => {
    expect(canonicalizeEvent(exampleEvent()).fingerprint).toBe(reference);
  });

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
