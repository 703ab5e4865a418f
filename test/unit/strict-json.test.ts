import { describe, expect, it } from "vitest";
import { parseStrictJson } from "../../src/domain/strict-json.ts";

describe("parseStrictJson", () => {
  it("parses ordinary JSON", () => {
    expect(parseStrictJson('{"a":[{"b":1},{"b":2}],"c":"{\\"a\\":1,\\"a\\":2}"}')).toEqual({
      ok: true,
      value: { a: [{ b: 1 }, { b: 2 }], c: '{"a":1,"a":2}' },
    });
  });

  it.each([
    ['{"a":1,"a":2}', "a"],
    ['{"x":{"order":1, "order" :2}}', "order"],
    ['[{"k":1},{"k":1,"k":1}]', "k"],
    ['{"\\u0061":1,"a":2}', "a"],
  ])("refuses repeated keys in %s", (text, key) => {
    const result = parseStrictJson(text);
    expect(result.ok).toBe(false);
    expect(result.ok === false && result.reason).toBe("duplicate-key");
    expect(result.ok === false && result.message).toContain(`"${key}"`);
  });

  it("allows the same key in sibling objects and as a value", () => {
    expect(parseStrictJson('{"a":{"a":"a"},"b":{"a":["a"]}}').ok).toBe(true);
  });

  it.each(["{", '{"a":}', "'x'", '{"a":1,}', "NaN"])("reports a syntax error for %s", (text) => {
    const result = parseStrictJson(text);
    expect(result.ok === false && result.reason).toBe("syntax");
  });
});
