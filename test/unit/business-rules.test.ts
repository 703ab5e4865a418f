import { describe, expect, it } from "vitest";
import { checkBusinessRules } from "../../src/domain/business-rules.ts";
import { formatMinorUnits, toMinorUnits } from "../../src/domain/money.ts";
import { exampleEvent } from "../support/events.ts";

describe("business rules", () => {
  it("accept the shared example", () => {
    expect(checkBusinessRules(exampleEvent())).toEqual([]);
  });

  it("list every violated rule with its field path", () => {
    const event = exampleEvent();
    event.order.total = "1990.00";
    event.payment.amount = "1.00";
    event.payment.currency = "EUR";
    const rules = checkBusinessRules(event).map((v) => [v.path, v.rule]);
    expect(rules).toEqual([
      ["/order/total", "total-equals-items-plus-delivery"],
      ["/payment/amount", "payment-equals-total"],
      ["/payment/currency", "single-currency"],
    ]);
  });

  it("count an order without delivery as delivery 0.00", () => {
    const event = exampleEvent();
    delete event.order.delivery;
    event.order.total = "1590.00";
    event.payment.amount = "1590.00";
    expect(checkBusinessRules(event)).toEqual([]);
  });

  it("do exact decimal arithmetic where floats would not", () => {
    const event = exampleEvent();
    event.order.items = [
      { sku: "A", quantity: 1, price: "0.10" },
      { sku: "B", quantity: 1, price: "0.20" },
    ];
    delete event.order.delivery;
    event.order.total = "0.30";
    event.payment.amount = "0.30";
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(checkBusinessRules(event)).toEqual([]);
  });

  it("refuse a quantity that is not a positive integer", () => {
    const event = exampleEvent();
    (event.order.items[0] as { quantity: number }).quantity = 0;
    expect(checkBusinessRules(event).map((v) => v.path)).toContain("/order/items/0/quantity");
  });

  it("convert money both ways", () => {
    expect(toMinorUnits("1890.05")).toBe(189005n);
    expect(formatMinorUnits(189005n)).toBe("1890.05");
    expect(formatMinorUnits(-5n)).toBe("-0.05");
    expect(() => toMinorUnits("1890.5")).toThrow(RangeError);
  });
});

/**
 * 1C's Date type holds 0001-01-01 to 3999-12-31 (platform documentation, type "Дата"); an event dated
 * outside it would fail in 1C on every attempt, so the gateway refuses it first, as 1C does (issue 20).
 */
describe("dates 1C can hold", () => {
  it("accept the last day of year 3999 and the first of year 1", () => {
    const event = exampleEvent();
    event.occurred_at = "3999-12-31T23:59:59Z";
    event.order.created_at = "0001-01-01T00:00:00Z";
    expect(checkBusinessRules(event)).toEqual([]);
  });

  it("refuse year 4000, year 0 and a far-future payment date, each with its path", () => {
    const event = exampleEvent();
    event.occurred_at = "4000-01-01T00:00:00Z";
    event.order.created_at = "0000-12-31T00:00:00Z";
    event.payment.paid_at = "9999-12-31T23:59:59+03:00";
    expect(checkBusinessRules(event).map((v) => [v.path, v.rule])).toEqual([
      ["/occurred_at", "date-within-1c-range"],
      ["/order/created_at", "date-within-1c-range"],
      ["/payment/paid_at", "date-within-1c-range"],
    ]);
  });
});
