import { describe, expect, it } from "vitest";
import { parseStrictJson } from "../../src/domain/strict-json.ts";

describe("parseStrictJson", () => {
  it("parses ordinary JSON", () => {
    expect(parseStrictJson('{"a":[{"b":1},{"b":2}],"c":"{\\"a\\":1,\\"a\\":2}"}')).toEqual({
      ok: true,
      value: { a: [{ b: 1 }, { b: 2 }], c: '{"a":1,"a":2}' },
      decimalNumbers: [],
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

describe("parseStrictJson: numbers written with a fraction or an exponent", () => {
  const noted = (text: string) => {
    const result = parseStrictJson(text);
    if (!result.ok) throw new Error(result.message);
    return result.decimalNumbers;
  };

  it.each([
    ['{"quantity":2.0}', [{ pointer: "/quantity", text: "2.0" }]],
    ['{"quantity":2e0}', [{ pointer: "/quantity", text: "2e0" }]],
    ['{"quantity":20E-1}', [{ pointer: "/quantity", text: "20E-1" }]],
    ['{"quantity":1.9999999999999999}', [{ pointer: "/quantity", text: "1.9999999999999999" }]],
    ['{"quantity": -1.5 }', [{ pointer: "/quantity", text: "-1.5" }]],
    ["2.0", [{ pointer: "", text: "2.0" }]],
  ])("reports %s", (text, expected) => {
    expect(noted(text)).toEqual(expected);
  });

  it.each([
    '{"quantity":20}',
    '{"quantity":-0,"n":[0,1,100]}',
    '{"price":"1.50","note":"2e0","a":true,"b":false,"c":null}',
    '{"1.5":1,"e":2}',
  ])("reports nothing for %s", (text) => {
    expect(noted(text)).toEqual([]);
  });

  it("points into nested arrays and objects", () => {
    const text = '{"a":[[1,2.0],[3e1,{"b":[4,5.5]}]],"c":{"d":6E0},"e":[],"f":[7.0]}';
    expect(noted(text).map((n) => n.pointer)).toEqual(["/a/0/1", "/a/1/0", "/a/1/1/b/1", "/c/d", "/f/0"]);
  });

  it("points at the items of an order", () => {
    const text = '{"order":{"items":[{"sku":"A","quantity":1},{"sku":"B","quantity":1.0}]}}';
    expect(noted(text)).toEqual([{ pointer: "/order/items/1/quantity", text: "1.0" }]);
  });

  it("escapes ~ and / in keys (RFC 6901) and decodes escaped keys", () => {
    expect(noted('{"a/b":{"m~n":1.0},"\\u0071":2e0," s ":[ 1 , 2.5 ]}').map((n) => n.pointer)).toEqual([
      "/a~1b/m~0n",
      "/q",
      "/ s /1",
    ]);
  });
});
