import type { OrderPaidEvent } from "../domain/order-paid.ts";
import {
  addressOf,
  articleFor,
  currencyFor,
  customerOf,
  type Item,
  itemsForLine,
  MappingError,
  minorUnits,
  money,
  shippingMethodFor,
} from "./mapping.ts";
import type { SourceSettings } from "./port.ts";

/**
 * A WooCommerce order (REST API v3, as the order webhook carries it) as our
 * order-paid event. Line `total` is after coupons and excludes tax, which is
 * in `total_tax` even in a store whose prices include tax, so a line's gross
 * is `total + total_tax`; `price` is a float and is never read.
 */

export type WooRecord = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is WooRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The payment instant: WooCommerce's `_gmt` dates are UTC written without an
 * offset ("2017-03-22T19:28:08"), so ours adds the Z.
 */
export function paidInstant(order: WooRecord): string {
  const instant = gmtInstant(order.date_paid_gmt);
  if (instant === undefined) {
    throw new MappingError(
      `date_paid_gmt ${JSON.stringify(order.date_paid_gmt)} is not a GMT date and time (YYYY-MM-DDTHH:MM:SS)`,
    );
  }
  return instant;
}

function gmtInstant(value: unknown): string | undefined {
  return typeof value === "string" && GMT_DATE_TIME.test(value) ? `${value}Z` : undefined;
}

const GMT_DATE_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$/;

/** The event for a paid order; throws MappingError when it cannot be booked as it is. */
export function wooOrderEvent(order: WooRecord, eventId: string, settings: SourceSettings): OrderPaidEvent {
  const id = String(order.id);
  const number = textOf(order.number) ?? id;
  const paidAt = paidInstant(order);
  const currency = currencyFor(order.currency, settings);
  const items = [...lineItems(order, settings), ...feeItems(order, settings)];
  if (items.length === 0) throw new MappingError("the order has no line items");
  const delivery = deliveryOf(order, settings);
  const total = minorUnits(order.total, "total");
  const added = items.reduce((sum, item) => sum + BigInt(item.quantity) * minorUnits(item.price, "price"), 0n);
  const sum = added + (delivery === undefined ? 0n : minorUnits(delivery.price, "shipping"));
  if (sum !== total) {
    throw new MappingError(
      `total is ${money(total, "total")}, but the lines, fees and shipping add up to ${money(sum, "the sum")}`,
    );
  }
  const createdAt = gmtInstant(order.date_created_gmt);
  const transactionId = textOf(order.transaction_id);
  const provider = textOf(order.payment_method);
  return {
    event_id: eventId,
    event_type: "order.paid",
    occurred_at: paidAt,
    order: {
      id,
      number,
      ...(createdAt === undefined ? {} : { created_at: createdAt }),
      customer: customerFor(order, number),
      items,
      ...(delivery === undefined ? {} : { delivery }),
      total: money(total, "total"),
      tax: money(minorUnits(order.total_tax, "total_tax"), "total_tax"),
      currency,
    },
    payment: {
      // Offline methods (bacs, cod) leave transaction_id empty; the order is then the payment's only id.
      id: transactionId ?? `order-${id}`,
      ...(provider === undefined ? {} : { provider }),
      amount: money(total, "total"),
      currency,
      paid_at: paidAt,
    },
  };
}

function lineItems(order: WooRecord, settings: SourceSettings): Item[] {
  return recordsOf(order.line_items, "line_items").flatMap((line) => {
    const sku = articleFor(textOf(line.sku), settings, lineIds(line));
    if (typeof line.quantity !== "number") {
      throw new MappingError(`the line with SKU "${sku}" has quantity ${JSON.stringify(line.quantity)}`);
    }
    return itemsForLine({
      sku,
      name: textOf(line.name),
      quantity: line.quantity,
      lineTotal: grossOf(line, `line "${sku}"`),
    });
  });
}

/** The SKU map's keys for a line without a SKU: the variation first, as it is the more precise. */
function lineIds(line: WooRecord): string[] {
  const ids: string[] = [];
  if (isPositiveInteger(line.variation_id)) ids.push(`variation:${line.variation_id}`);
  if (isPositiveInteger(line.product_id)) ids.push(`product:${line.product_id}`);
  return ids;
}

/**
 * Fees (gift wrap, payment surcharges) are money the customer paid, so each
 * is an item; they have no SKU, so 1C's article must come from the SKU map
 * under `fee:<name>`. A negative fee (a discount added as a fee) has no item
 * to be booked as.
 */
function feeItems(order: WooRecord, settings: SourceSettings): Item[] {
  return recordsOf(order.fee_lines, "fee_lines").flatMap((fee) => {
    const name = textOf(fee.name) ?? "";
    if ([fee.total, fee.total_tax].some((amount) => typeof amount === "string" && amount.trim().startsWith("-"))) {
      throw new MappingError(`fee "${name}" is negative (${String(fee.total)}): it cannot be booked as an item`);
    }
    const gross = grossOf(fee, `fee "${name}"`);
    if (gross === 0n) return [];
    let sku: string;
    try {
      sku = articleFor(undefined, settings, [`fee:${name}`]);
    } catch (error) {
      if (!(error instanceof MappingError)) throw error;
      throw new MappingError(
        `fee "${name}" (${money(gross, "the fee")}) has no 1C article: map "fee:${name}" in the sender's SKU map`,
      );
    }
    return itemsForLine({ sku, name, quantity: 1, lineTotal: gross });
  });
}

function deliveryOf(order: WooRecord, settings: SourceSettings): OrderPaidEvent["order"]["delivery"] {
  const lines = recordsOf(order.shipping_lines, "shipping_lines");
  if (lines.length === 0) return undefined;
  const price = lines.reduce((sum, line, index) => sum + grossOf(line, `shipping line ${index + 1}`), 0n);
  const method = shippingMethodFor(textOf(lines[0]?.method_id), settings);
  const shipping = isRecord(order.shipping) ? order.shipping : {};
  const address = addressOf(
    [shipping.address_1, shipping.address_2, shipping.city, shipping.state, shipping.postcode, shipping.country].map(
      textOf,
    ),
  );
  return {
    ...(method === undefined ? {} : { method }),
    ...(address === undefined ? {} : { address }),
    price: money(price, "shipping"),
  };
}

function customerFor(order: WooRecord, number: string): OrderPaidEvent["order"]["customer"] {
  const billing = isRecord(order.billing) ? order.billing : {};
  const fullName = [textOf(billing.first_name), textOf(billing.last_name)].filter((part) => part !== undefined);
  return customerOf({
    // 0 is a guest: no account to name.
    id: isPositiveInteger(order.customer_id) ? String(order.customer_id) : undefined,
    names: [fullName.join(" "), textOf(billing.company)],
    email: textOf(billing.email),
    phone: textOf(billing.phone),
    fallbackName: `WooCommerce order ${number}`,
  });
}

/** What the customer paid for a line, shipping line or fee: after coupons, with its tax. */
function grossOf(line: WooRecord, what: string): bigint {
  return minorUnits(line.total, `the total of ${what}`) + minorUnits(line.total_tax ?? "0", `the total_tax of ${what}`);
}

function recordsOf(value: unknown, field: string): WooRecord[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isRecord)) throw new MappingError(`${field} is not a list of objects`);
  return value;
}

/** A non-empty string, or a number written as one (a plugin may send an integer `number`). */
function textOf(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}
