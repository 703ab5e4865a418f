import { isWithinOnecDateRange } from "../onec/contract/dates.ts";

export type SkusResult = { ok: true; skus: string[]; booking: Booking } | { ok: false; message: string };

/**
 * What 1C's order document would hold of the event: its lines and its money,
 * as the event wrote them (strings, never re-computed), so a test can check
 * the order 1C made against what the shop says was paid.
 */
export interface Booking {
  lines: { sku: string; quantity: number; price: string }[];
  deliveryPrice: string | null;
  total: string | null;
  tax: string | null;
  currency: string | null;
}

/**
 * The emulator reads only what 1C itself needs to book the order: the lines and
 * their articles. Full schema validation is the gateway's job, not 1C's.
 */
export function readSkus(event: unknown): SkusResult {
  if (!isObject(event) || !isObject(event.order) || !Array.isArray(event.order.items)) {
    return { ok: false, message: "event has no order.items array" };
  }
  const outOfRange = datesOutsideOnecRange(event);
  if (outOfRange !== undefined) return { ok: false, message: outOfRange };
  const skus: string[] = [];
  const lines: Booking["lines"] = [];
  for (const [index, item] of event.order.items.entries()) {
    if (!isObject(item) || typeof item.sku !== "string") {
      return { ok: false, message: `order.items[${index}].sku must be a string` };
    }
    skus.push(item.sku);
    lines.push({ sku: item.sku, quantity: Number(item.quantity), price: String(item.price) });
  }
  const { order } = event;
  const delivery = isObject(order.delivery) ? order.delivery : undefined;
  const booking: Booking = {
    lines,
    deliveryPrice: textOrNull(delivery?.price),
    total: textOrNull(order.total),
    tax: textOrNull(order.tax),
    currency: textOrNull(order.currency),
  };
  return { ok: true, skus, booking };
}

function textOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** 1C refuses an event dated outside the years its Date type holds as malformed (contract 3). */
function datesOutsideOnecRange(event: Record<string, unknown>): string | undefined {
  const order = event.order as Record<string, unknown>;
  const payment = isObject(event.payment) ? event.payment : {};
  const dates: [string, unknown][] = [
    ["occurred_at", event.occurred_at],
    ["order.created_at", order.created_at],
    ["payment.paid_at", payment.paid_at],
  ];
  for (const [path, value] of dates) {
    if (typeof value === "string" && !isWithinOnecDateRange(value)) {
      return `${path} must be an ISO 8601 date-time with a year from 0001 to 3999, got ${JSON.stringify(value)}`;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
