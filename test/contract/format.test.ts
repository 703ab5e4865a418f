/** The case file format: loading, example bodies, defaults, templates. */
import { describe, expect, it } from "vitest";
import {
  CASES_FILE,
  CONTRACT_DIR,
  ContractFileError,
  loadContract,
  parseContract,
} from "../../src/onec/contract/cases.ts";
import { getPath, setPath } from "../../src/onec/contract/json-path.ts";
import { ContractSession } from "../../src/onec/contract/run-contract.ts";
import { fillTemplates, type RecordedAnswer, TemplateError } from "../../src/onec/contract/template.ts";

/** Example paths in a case file resolve from where the shipped file lives. */
const HERE = new URL(CASES_FILE, CONTRACT_DIR);

function minimal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "c", request: { method: "GET", path: "/x" }, expect: { status: 200 }, ...overrides };
}

describe("json paths", () => {
  it("reads and writes objects and array items in place", () => {
    const value = { order: { items: [{ sku: "A" }, { sku: "B" }] } };
    expect(getPath(value, "order.items.1.sku")).toBe("B");
    expect(getPath(value, "")).toBe(value);
    expect(getPath(value, "order.nothing.deeper")).toBeUndefined();
    expect(getPath(value, "order.items.x")).toBeUndefined();
    expect(setPath(value, "order.items.0.sku", "Z")).toBe(true);
    expect(setPath(value, "order.note", "new")).toBe(true);
    expect(setPath(value, "order.missing.note", "x")).toBe(false);
    expect(setPath(value, "order.note", undefined)).toBe(true);
    expect(setPath(value, "order.note", undefined)).toBe(false);
    expect(value).toEqual({ order: { items: [{ sku: "Z" }, { sku: "B" }] } });
  });
});

describe("templates", () => {
  const answers = new Map<string, RecordedAnswer>([
    ["first", { status: 201, headers: { "x-correlation-id": "c-9" }, body: { order: { id: "o-1", seq: 3 } } }],
  ]);
  const scope = { run: "R", key: "contract-R", caseName: "now", answers };

  it("fills run, key, case and references to earlier answers, keeping a lone reference's type", () => {
    expect(
      fillTemplates(
        {
          id: "{{key}}",
          sku: "NO-SUCH-ARTICLE-{{run}}",
          corr: "{{key}}-{{case}}",
          order: "{{first.body.order.id}}",
          seq: "{{first.body.order.seq}}",
          seqText: "n{{first.body.order.seq}}",
          status: "{{first.status}}",
          header: "{{first.headers.X-Correlation-ID}}",
          list: ["{{run}}", 1, null],
          pattern: "^\\d{4}-",
        },
        scope,
      ),
    ).toEqual({
      id: "contract-R",
      sku: "NO-SUCH-ARTICLE-R",
      corr: "contract-R-now",
      order: "o-1",
      seq: 3,
      seqText: "n3",
      status: 201,
      header: "c-9",
      list: ["R", 1, null],
      pattern: "^\\d{4}-",
    });
  });

  it("refuses what it cannot resolve rather than sending the placeholder", () => {
    expect(() => fillTemplates("{{nope}}", scope)).toThrow(TemplateError);
    expect(() => fillTemplates("{{later.body.order.id}}", scope)).toThrow(/case "later" has no answer/);
    expect(() => fillTemplates("{{first.body.order.number}}", scope)).toThrow(/has no body\.order\.number/);
    expect(() => fillTemplates("{{first.bogus}}", scope)).toThrow(/status, headers/);
  });
});

describe("parseContract", () => {
  it("merges default headers, a case's null dropping one, and builds a body from the example with overrides", () => {
    const [parsed] = parseContract(
      {
        defaults: {
          request: { headers: { "Content-Type": "application/json", "x-correlation-id": "{{key}}" } },
          expect: { headers: { "content-type": { $match: "json" } } },
        },
        cases: [
          minimal({
            request: {
              method: "POST",
              path: "/v1/orders/paid",
              headers: { "x-correlation-id": null, "Idempotency-Key": "{{key}}" },
              body: {
                example: "../../schemas/examples/order-paid.json",
                set: { event_id: "{{key}}", "order.items.0.sku": "NOPE" },
                unset: ["payment.provider"],
              },
            },
          }),
        ],
      },
      HERE,
    );
    expect(parsed?.request.headers).toEqual({ "content-type": "application/json", "idempotency-key": "{{key}}" });
    expect(parsed?.expect.headers).toEqual({ "content-type": { $match: "json" } });
    expect(parsed?.request.body?.kind).toBe("json");
    const body = parsed?.request.body?.kind === "json" ? parsed.request.body.value : undefined;
    expect(getPath(body, "event_id")).toBe("{{key}}");
    expect(getPath(body, "order.items.0.sku")).toBe("NOPE");
    expect(getPath(body, "order.items.1.sku")).toBe("MUG-010");
    expect(getPath(body, "payment.provider")).toBeUndefined();
    expect(getPath(body, "payment.id")).toBe("pay_7781");
  });

  it.each([
    [{ cases: [] }, /non-empty cases/],
    [{ cases: [minimal({ name: "Bad Name" })] }, /lower-case/],
    [{ cases: [minimal(), minimal()] }, /used twice/],
    [{ cases: [minimal({ request: { method: "get", path: "/x" } })] }, /request\.method/],
    [{ cases: [minimal({ request: { method: "GET", path: "x" } })] }, /request\.path/],
    [{ cases: [minimal({ expect: { status: "200" } })] }, /expect\.status/],
    [{ cases: [minimal({ request: { method: "GET", path: "/x", headers: { a: 1 } } })] }, /string or null/],
    [{ cases: [minimal({ request: { method: "POST", path: "/x", body: {} } })] }, /"example", "json" or "raw"/],
    [
      { cases: [minimal({ request: { method: "POST", path: "/x", body: { example: "nowhere.json" } } })] },
      /cannot read/,
    ],
    [
      {
        cases: [
          minimal({
            request: {
              method: "POST",
              path: "/x",
              body: { example: "../../schemas/examples/order-paid.json", set: { "no.such.place": 1 } },
            },
          }),
        ],
      },
      /no place for "no\.such\.place"/,
    ],
  ])("refuses a malformed file: %j", (input, message) => {
    expect(() => parseContract(input, HERE)).toThrow(ContractFileError);
    expect(() => parseContract(input, HERE)).toThrow(message);
  });
});

describe("the shipped cases", () => {
  it("send byte-identical bodies for the first delivery and its repeats, and another body for the reused key", () => {
    const cases = loadContract();
    const session = new ContractSession("R");
    const body = (name: string) => {
      const found = cases.find((c) => c.name === name);
      if (found === undefined) throw new Error(`no case ${name}`);
      return session.prepareRequest(found).body;
    };
    const first = body("first-delivery");
    expect(body("repeat")).toBe(first);
    expect(body("repeat-without-correlation-id")).toBe(first);
    expect(body("reused-key-other-body")).not.toBe(first);
    expect(JSON.parse(first ?? "")).toMatchObject({ event_id: "contract-R", order: { id: "contract-R" } });
    expect(body("unknown-article")).toContain('"sku":"NO-SUCH-ARTICLE-R"');
  });
});
