import type { ProblemFieldError } from "../errors/problem.ts";
import { isWithinOnecDateRange, ONEC_MAX_YEAR, ONEC_MIN_YEAR } from "../onec/contract/dates.ts";
import { formatMinorUnits, toMinorUnits } from "./money.ts";
import type { OrderPaidEvent } from "./order-paid.ts";

/**
 * The rules a schema cannot say. Pure: returns every violation, not the first,
 * so that a sender fixes the event in one round trip.
 * Runs only on events the schema has admitted.
 */
export function checkBusinessRules(event: OrderPaidEvent): ProblemFieldError[] {
  const violations: ProblemFieldError[] = [];
  const { order, payment } = event;

  let itemsSum = 0n;
  order.items.forEach((item, index) => {
    if (!Number.isSafeInteger(item.quantity) || item.quantity < 1) {
      violations.push({
        path: `/order/items/${index}/quantity`,
        rule: "quantity-positive-integer",
        message: `quantity must be a positive integer, got ${item.quantity}`,
      });
      return;
    }
    itemsSum += BigInt(item.quantity) * toMinorUnits(item.price);
  });

  const deliveryPrice = order.delivery ? toMinorUnits(order.delivery.price) : 0n;
  const expectedTotal = itemsSum + deliveryPrice;
  const total = toMinorUnits(order.total);
  if (total !== expectedTotal) {
    violations.push({
      path: "/order/total",
      rule: "total-equals-items-plus-delivery",
      message: `order.total is ${order.total}, but the items and delivery add up to ${formatMinorUnits(expectedTotal)}`,
    });
  }

  if (order.tax !== undefined && toMinorUnits(order.tax) > total) {
    violations.push({
      path: "/order/tax",
      rule: "tax-within-total",
      message: `order.tax is ${order.tax}, more than order.total ${order.total}: the tax is part of the total`,
    });
  }

  if (toMinorUnits(payment.amount) !== total) {
    violations.push({
      path: "/payment/amount",
      rule: "payment-equals-total",
      message: `payment.amount is ${payment.amount}, but order.total is ${order.total}`,
    });
  }

  if (payment.currency !== order.currency) {
    violations.push({
      path: "/payment/currency",
      rule: "single-currency",
      message: `payment.currency is ${payment.currency}, but order.currency is ${order.currency}`,
    });
  }

  for (const [path, value] of [
    ["/occurred_at", event.occurred_at],
    ["/order/created_at", order.created_at],
    ["/payment/paid_at", payment.paid_at],
  ] as const) {
    if (value !== undefined && !isWithinOnecDateRange(value)) {
      violations.push({
        path,
        rule: "date-within-1c-range",
        message: `${path.slice(1).replaceAll("/", ".")} is ${value}; 1C's dates run from year ${ONEC_MIN_YEAR} to ${ONEC_MAX_YEAR}`,
      });
    }
  }

  return violations;
}
