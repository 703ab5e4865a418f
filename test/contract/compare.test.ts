import { describe, expect, it } from "vitest";
import type { CaseExpect } from "../../src/onec/contract/cases.ts";
import {
  checkValue,
  compareAnswer,
  describeActual,
  describeExpected,
  type ObservedAnswer,
} from "../../src/onec/contract/compare.ts";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8", "x-correlation-id": "c-1" };

function answer(status: number, body: unknown, headers: Record<string, string> = JSON_HEADERS): ObservedAnswer {
  return { status, headers, bodyText: typeof body === "string" ? body : JSON.stringify(body) };
}

function expectation(overrides: Partial<CaseExpect> = {}): CaseExpect {
  return {
    status: 200,
    headers: { "content-type": { $match: "^application/json" }, "x-correlation-id": "c-1" },
    body: { "order.id": "o-1", "order.number": { $match: "\\S" } },
    ...overrides,
  };
}

describe("checkValue", () => {
  it("compares plain values deeply and strictly", () => {
    expect(checkValue("o-1", "o-1")).toBeUndefined();
    expect(checkValue({ id: "o-1" }, { id: "o-1" })).toBeUndefined();
    expect(checkValue(201, "201")).toBe('"201", expected 201');
    expect(checkValue("o-1", "o-2")).toBe('"o-2", expected "o-1"');
    expect(checkValue("o-1", undefined)).toBe('absent, expected "o-1"');
    expect(checkValue(null, null)).toBeUndefined();
  });

  it("applies $type, $match and $absent, all of them when combined", () => {
    expect(checkValue({ $type: "string" }, "x")).toBeUndefined();
    expect(checkValue({ $type: "string" }, 5)).toBe('5 is not of type "string"');
    expect(checkValue({ $type: "array" }, [])).toBeUndefined();
    expect(checkValue({ $match: "^ORD-\\d+$" }, "ORD-12")).toBeUndefined();
    expect(checkValue({ $match: "\\S" }, "   ")).toBe('"   " does not match /\\S/');
    expect(checkValue({ $match: "\\S" }, undefined)).toBe("absent does not match /\\S/");
    expect(checkValue({ $match: "\\d" }, 5)).toBe("5 does not match /\\d/");
    expect(checkValue({ $absent: true }, undefined)).toBeUndefined();
    expect(checkValue({ $absent: true }, "x")).toBe('"x", expected absent');
    expect(checkValue({ $absent: false }, undefined)).toBe("absent, expected present");
    expect(checkValue({ $type: "string", $match: "^a" }, "b")).toBe('"b" does not match /^a/');
  });

  it("reports a matcher it does not know or a pattern that does not compile, never passes it", () => {
    expect(checkValue({ $oneOf: [1, 2] }, 1)).toBe("unknown matcher $oneOf");
    expect(checkValue({ $match: "(" }, "x")).toMatch(/^bad \$match pattern/);
    expect(checkValue({ $match: "x", extra: 1 }, "x")).toBe("unknown matcher extra");
  });
});

describe("compareAnswer", () => {
  it("is empty when status, headers and body all hold", () => {
    expect(compareAnswer(expectation(), answer(200, { order: { id: "o-1", number: "N-1" } }))).toEqual([]);
  });

  it("lists every difference: status, header, body path", () => {
    const problems = compareAnswer(
      expectation(),
      answer(201, { order: { id: "o-2", number: "" } }, { "content-type": "application/json" }),
    );
    expect(problems).toEqual([
      "status 201, expected 200",
      'header x-correlation-id: absent, expected "c-1"',
      'body order.id: "o-2", expected "o-1"',
      'body order.number: "" does not match /\\S/',
    ]);
  });

  it("says so when the body is not JSON, and does not look at it when nothing is expected of it", () => {
    expect(compareAnswer(expectation(), answer(200, "<html>oops</html>"))).toEqual([
      "body is not JSON: <html>oops</html>",
    ]);
    expect(compareAnswer(expectation({ body: {} }), answer(200, "<html>oops</html>"))).toEqual([]);
  });

  it("finds headers whatever the case of the expected name", () => {
    expect(compareAnswer(expectation({ headers: { "X-Correlation-ID": "c-1" }, body: {} }), answer(200, {}))).toEqual(
      [],
    );
  });
});

describe("describeExpected / describeActual", () => {
  it("names the status and the error code or the order", () => {
    expect(describeExpected(expectation({ status: 201 }))).toBe("201 order");
    expect(describeExpected(expectation({ status: 409, body: { "error.code": "EVENT_ID_REUSED" } }))).toBe(
      "409 EVENT_ID_REUSED",
    );
    expect(describeExpected(expectation({ status: 415, body: { "error.code": { $type: "string" } } }))).toBe("415");
    expect(describeActual(answer(201, { order: { id: "x", number: "ORD-7" } }))).toBe("201 order ORD-7");
    expect(describeActual(answer(422, { error: { code: "UNKNOWN_SKU" } }))).toBe("422 UNKNOWN_SKU");
    expect(describeActual(answer(502, "Bad Gateway"))).toBe("502 (not JSON)");
    expect(describeActual(answer(204, ""))).toBe("204");
  });
});
