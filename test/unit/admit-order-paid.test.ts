import { describe, expect, it } from "vitest";
import { admitOrderPaid } from "../../src/accept/admit-order-paid.ts";
import { isValidEventId } from "../../src/domain/order-paid.ts";
import { parseStrictJson } from "../../src/domain/strict-json.ts";
import { checkOrderPaidSchema } from "../../src/domain/validate-order-paid.ts";
import { exampleEvent } from "../support/events.ts";

function admitText(text: string) {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return admitOrderPaid(parsed.value, undefined, parsed.decimalNumbers);
}

describe("event_id", () => {
  it.each([".", ".."])("refuses the dot segment %j: a Location ending in it cannot be followed", (id) => {
    expect(isValidEventId(id)).toBe(false);
    expect(checkOrderPaidSchema({ ...exampleEvent(), event_id: id }).ok).toBe(false);
    expect(admitOrderPaid({ ...exampleEvent(), event_id: id }, undefined)).toMatchObject({
      ok: false,
      code: "GW_ERR_INVALID_EVENT_ID",
    });
  });

  it.each(["...", ".a", "a.", "a..b", "x".repeat(128), `.${"x".repeat(127)}`])("accepts %j", (id) => {
    expect(isValidEventId(id)).toBe(true);
    expect(checkOrderPaidSchema({ ...exampleEvent(), event_id: id }).ok).toBe(true);
  });

  it("refuses 129 characters", () => {
    expect(isValidEventId("x".repeat(129))).toBe(false);
  });
});

describe("admitOrderPaid: an integer written with a fraction or an exponent", () => {
  const text = JSON.stringify(exampleEvent());

  it.each(["2.0", "2e0", "1.9999999999999999", "0.2E1"])("refuses quantity %s with a 422 pointing at it", (q) => {
    const admission = admitText(text.replace('"quantity":2', `"quantity":${q}`));
    expect(admission).toMatchObject({ ok: false, code: "GW_ERR_SCHEMA_VIOLATION" });
    expect(admission.ok === false && admission.errors).toEqual([
      {
        path: "/order/items/0/quantity",
        rule: "integer-notation",
        message: `must be written as an integer, without fraction or exponent (got ${q})`,
      },
    ]);
  });

  it("lists it with the schema's own violations", () => {
    const admission = admitText(
      text.replace('"quantity":2', '"quantity":2.0').replace('"currency":"RUB"', '"currency":"rub"'),
    );
    expect(admission.ok === false && admission.errors?.map((e) => e.path)).toEqual([
      "/order/currency",
      "/order/items/0/quantity",
    ]);
  });

  it("leaves a real fraction to the schema's integer rule, listed once", () => {
    const admission = admitText(text.replace('"quantity":2', '"quantity":1.5'));
    expect(admission.ok === false && admission.errors?.map((e) => [e.path, e.rule])).toEqual([
      ["/order/items/0/quantity", "type"],
    ]);
  });

  it("accepts the example as it is written", () => {
    expect(admitText(text).ok).toBe(true);
  });
});
