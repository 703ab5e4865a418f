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
