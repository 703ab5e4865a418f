import type { OrderPaidEvent } from "../domain/order-paid.ts";
import {
  addressOf,
  articleFor,
  currencyFor,
  customerOf,
  itemsForLine,
  MappingError,
  minorUnits,
  money,
  quoted,
  sharesOf,
  shippingMethodFor,
  spreadDiscount,
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
      `date_paid_gmt ${quoted(order.date_paid_gmt)} is not a GMT date and time (YYYY-MM-DDTHH:MM:SS)`,
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
  const lines = lineItems(order, settings);
  const fees = feeLines(order, settings);
  const charged = [...lines, ...fees.charged];
  if (charged.length === 0) throw new MappingError("the order has no line items");
  const shipping = shippingOf(order);
  const total = minorUnits(order.total, "total");
  const discount = fees.discounts.reduce((sum, fee) => sum - fee.gross, 0n);
  const shippingGross = shipping?.gross ?? 0n;
  const added = charged.reduce((sum, line) => sum + line.gross, 0n) + shippingGross - discount;
  const rounding = added === total ? undefined : taxRounding(order, charged, fees.discounts, shipping, total - added);
  const grosses = rounding?.grosses ?? charged.map((line) => line.gross);
  // Negative fees come off the line items only: charged fees keep their price.
  const feeNames = fees.discounts.map((fee) => `"${fee.name}"`).join(", ");
  const names = {
    discount: `the negative fee${fees.discounts.length > 1 ? "s" : ""} ${feeNames}`,
    lines: "the line items",
  };
  const discounted = [
    ...spreadDiscount(grosses.slice(0, lines.length), discount, names),
    ...grosses.slice(lines.length),
  ];
  const items = charged.flatMap((line, index) =>
    itemsForLine({ sku: line.sku, name: line.name, quantity: line.quantity, lineTotal: discounted[index] as bigint }),
  );
  const shippingPrice = shippingGross + (rounding?.shipping ?? 0n);
  const sum =
    items.reduce((sum, item) => sum + BigInt(item.quantity) * minorUnits(item.price, "price"), 0n) +
    (shipping === undefined ? 0n : shippingPrice);
  if (sum !== total) {
    throw new MappingError(
      `total is ${money(total, "total")}, but the lines, fees and shipping add up to ${money(sum, "the sum")}`,
    );
  }
  const method = shippingMethodFor(shipping?.method, settings);
  const delivery =
    shipping === undefined
      ? undefined
      : {
          ...(shipping.address === undefined ? {} : { address: shipping.address }),
          ...(method === undefined ? {} : { method }),
          price: money(shippingPrice, "shipping"),
        };
  const createdAt = gmtInstant(order.date_created_gmt);
  const transactionId = textOf(order.transaction_id);
  const provider = textOf(order.payment_method);
  // Keys in canonical order, every object: fingerprint.ts then writes the event with JSON.stringify.
  return {
    event_id: eventId,
    event_type: "order.paid",
    occurred_at: paidAt,
    order: {
      ...(createdAt === undefined ? {} : { created_at: createdAt }),
      currency,
      customer: customerFor(order, number),
      ...(delivery === undefined ? {} : { delivery }),
      id,
      items,
      number,
      tax: money(minorUnits(order.total_tax, "total_tax"), "total_tax"),
      total: money(total, "total"),
    },
    payment: {
      amount: money(total, "total"),
      currency,
      // Offline methods (bacs, cod) leave transaction_id empty; the order is then the payment's only id.
      id: transactionId ?? `order-${id}`,
      paid_at: paidAt,
      ...(provider === undefined ? {} : { provider }),
    },
  };
}

/** A line item or a charged fee: `quantity` units for `gross` (total + total_tax), `tax` of it. */
interface Charged {
  sku: string;
  name: string | undefined;
  quantity: number;
  gross: bigint;
  tax: bigint;
}

function lineItems(order: WooRecord, settings: SourceSettings): Charged[] {
  return recordsOf(order.line_items, "line_items").map((line) => {
    const sku = articleFor(textOf(line.sku), settings, lineIds(line));
    if (typeof line.quantity !== "number") {
      throw new MappingError(`the line with SKU "${sku}" has quantity ${quoted(line.quantity)}`);
    }
    const { gross, tax } = amountsOf(line, `line "${sku}"`);
    return { sku, name: textOf(line.name), quantity: line.quantity, gross, tax };
  });
}

/** The SKU map's keys for a line without a SKU: the variation first, as it is the more precise. */
function lineIds(line: WooRecord): string[] {
  const ids: string[] = [];
  if (isPositiveInteger(line.variation_id)) ids.push(`variation:${line.variation_id}`);
  if (isPositiveInteger(line.product_id)) ids.push(`product:${line.product_id}`);
  return ids;
}

/** A negative fee: a discount (`gross` below zero, its tax `tax`). */
interface Discount {
  name: string;
  gross: bigint;
  tax: bigint;
}

/**
 * Fees (gift wrap, payment surcharges) are money the customer paid, so each
 * is an item; they have no SKU, so 1C's article must come from the SKU map
 * under `fee:<name>`. A negative fee is how many discount and payment-method
 * plugins give a discount (`total` "-10.00" with its `total_tax`): it is
 * spread over the line items like a coupon, and needs no article.
 */
function feeLines(order: WooRecord, settings: SourceSettings): { charged: Charged[]; discounts: Discount[] } {
  const charged: Charged[] = [];
  const discounts: Discount[] = [];
  for (const fee of recordsOf(order.fee_lines, "fee_lines")) {
    const name = textOf(fee.name) ?? "";
    const { gross, tax } = amountsOf(fee, `fee "${name}"`, true);
    if (gross < 0n) {
      discounts.push({ name, gross, tax });
      continue;
    }
    if (gross === 0n) continue;
    let sku: string;
    try {
      sku = articleFor(undefined, settings, [`fee:${name}`]);
    } catch (error) {
      if (!(error instanceof MappingError)) throw error;
      throw new MappingError(
        `fee "${name}" (${money(gross, "the fee")}) has no 1C article: map "fee:${name}" in the sender's SKU map`,
      );
    }
    charged.push({ sku, name, quantity: 1, gross, tax });
  }
  return { charged, discounts };
}

interface Shipping {
  method: string | undefined;
  address: string | undefined;
  gross: bigint;
  /** Each shipping line's total_tax. */
  taxes: bigint[];
}

function shippingOf(order: WooRecord): Shipping | undefined {
  const lines = recordsOf(order.shipping_lines, "shipping_lines");
  if (lines.length === 0) return undefined;
  const amounts = lines.map((line, index) => amountsOf(line, `shipping line ${index + 1}`));
  const shipping = isRecord(order.shipping) ? order.shipping : {};
  const address = addressOf(
    [shipping.address_1, shipping.address_2, shipping.city, shipping.state, shipping.postcode, shipping.country].map(
      textOf,
    ),
  );
  return {
    method: textOf(lines[0]?.method_id),
    address,
    gross: amounts.reduce((sum, line) => sum + line.gross, 0n),
    taxes: amounts.map((line) => line.tax),
  };
}

/**
 * The cents WooCommerce's "Round tax at subtotal level" leaves between the
 * lines and the order (woocommerce_tax_round_at_subtotal = yes). Each line's
 * tax is kept unrounded and the order's cart_tax, shipping_tax and total_tax
 * are their sums rounded once, but the webhook writes each line's total_tax
 * rounded on its own (woocommerce/woocommerce#25720): three lines of 0.99 at
 * 7.5 % are 0.07 of tax each and 0.22 together, paid 3.19 while the lines say
 * 3.18. `difference` (the order's total less what the lines add up to) is
 * taken for such rounding only when the order's total_tax differs from the
 * lines' taxes by exactly as much, and by at most a cent for each line with
 * tax; it then goes to the shipping as far as shipping_tax says the shipping
 * lines' rounding made it, and the rest to the line items and charged fees
 * with tax, in proportion to their tax (sharesOf). Undefined otherwise: the
 * order then stays unmapped with both figures.
 */
function taxRounding(
  order: WooRecord,
  charged: readonly Charged[],
  discounts: readonly Discount[],
  shipping: Shipping | undefined,
  difference: bigint,
): { grosses: bigint[]; shipping: bigint } | undefined {
  const cartTaxes = [...charged.map((line) => line.tax), ...discounts.map((fee) => fee.tax)];
  const shippingTaxes = shipping?.taxes ?? [];
  const taxes = [...cartTaxes, ...shippingTaxes];
  const taxedLines = BigInt(taxes.filter((tax) => tax !== 0n).length);
  const orderTax = optionalAmount(order.total_tax, "total_tax");
  if (orderTax === undefined || orderTax - sumOf(taxes) !== difference) return undefined;
  if (difference > taxedLines || -difference > taxedLines) return undefined;
  const cartTax = optionalAmount(order.cart_tax, "cart_tax");
  const shippingTax = optionalAmount(order.shipping_tax, "shipping_tax");
  let toShipping = 0n;
  if (shipping !== undefined && cartTax !== undefined && shippingTax !== undefined) {
    const cartDifference = cartTax - sumOf(cartTaxes);
    const shippingDifference = shippingTax - sumOf(shippingTaxes);
    if (cartDifference + shippingDifference === difference) toShipping = shippingDifference;
  }
  const toLines = difference - toShipping;
  const weights = charged.map((line) => (line.tax > 0n ? line.tax : 0n));
  if (toLines !== 0n && sumOf(weights) === 0n) return undefined;
  const shares = sharesOf(weights, toLines < 0n ? -toLines : toLines);
  const sign = toLines < 0n ? -1n : 1n;
  return { grosses: charged.map((line, index) => line.gross + sign * (shares[index] as bigint)), shipping: toShipping };
}

function sumOf(amounts: readonly bigint[]): bigint {
  return amounts.reduce((sum, amount) => sum + amount, 0n);
}

/** An order-level amount that may be missing (a plugin's order): undefined then, signed otherwise. */
function optionalAmount(amount: unknown, what: string): bigint | undefined {
  return amount === undefined || amount === null || amount === "" ? undefined : signedUnits(amount, what);
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

/**
 * What the customer paid for a line, shipping line or fee (after coupons, with
 * its tax) and the tax in it. Only a fee's amounts may be negative.
 */
function amountsOf(line: WooRecord, what: string, signed = false): { gross: bigint; tax: bigint } {
  const read = signed ? signedUnits : minorUnits;
  const tax = read(line.total_tax ?? "0", `the total_tax of ${what}`);
  return { gross: read(line.total, `the total of ${what}`) + tax, tax };
}

/** An amount that may be negative ("-10.00", -10): minorUnits of its magnitude, with its sign. */
function signedUnits(amount: unknown, what: string): bigint {
  if (typeof amount === "number" && amount < 0) return -minorUnits(-amount, what);
  if (typeof amount === "string" && amount.trim().startsWith("-")) return -minorUnits(amount.trim().slice(1), what);
  return minorUnits(amount, what);
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
