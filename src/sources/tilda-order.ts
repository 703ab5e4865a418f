import type { OrderPaidEvent } from "../domain/order-paid.ts";
import {
  addressOf,
  articleFor,
  currencyFor,
  customerOf,
  type Item,
  itemsForLine,
  keyPart,
  MappingError,
  minorUnits,
  money,
  quoted,
  shippingMethodFor,
  spreadDiscount as spreadOverLines,
} from "./mapping.ts";
import type { SourceSettings } from "./port.ts";

/**
 * Tilda's order (the form fields and the payment block) as our order-paid
 * event. Tilda names no currency and reports no tax; its payload has no time,
 * so the event's time is when the gateway received it.
 */

/** The payment block and the form around it, as parsed from either body shape. */
export interface TildaDelivery {
  fields: Readonly<Record<string, unknown>>;
  payment: Readonly<Record<string, unknown>>;
  orderId: string;
  /** The payment system's transaction id (`payment.systranid`): the evidence that money moved. */
  transactionId: string;
  receivedAt: number;
}

export function tildaOrderEvent(delivery: TildaDelivery, settings: SourceSettings): OrderPaidEvent {
  const { fields, payment, orderId } = delivery;
  const currency = currencyFor(undefined, settings);
  const lines = productsOf(payment.products).map((product) => lineOf(product, settings));
  const discount = present(payment.discount) ? minorUnits(payment.discount, "payment.discount") : 0n;
  const discounted = spreadDiscount(
    lines.map((line) => line.lineTotal),
    discount,
  );
  const items: Item[] = lines.flatMap((line, index) =>
    itemsForLine({ ...line, lineTotal: discounted[index] as bigint }),
  );
  const delivered = deliveryOf(payment, settings);
  const total = minorUnits(payment.amount, "payment.amount");
  const sum = discounted.reduce((a, b) => a + b, 0n) + (delivered?.price ?? 0n);
  if (sum !== total) {
    const less = discount === 0n ? "" : ` (less the discount ${money(discount, "payment.discount")})`;
    throw new MappingError(
      `payment.amount is ${money(total, "payment.amount")}, but the products${less} and delivery add up to ${money(sum, "the sum")}`,
    );
  }
  const sys = text(payment.sys)?.trim() || undefined;
  // Keys in canonical order, every object: fingerprint.ts then writes the event with JSON.stringify.
  return {
    event_id: tildaKey(orderId),
    event_type: "order.paid",
    occurred_at: new Date(delivery.receivedAt).toISOString(),
    order: {
      currency,
      customer: customerOf({
        names: [text(fields.Name), text(fields.name), text(payment.delivery_fio)],
        email: text(fields.Email) ?? text(fields.email),
        phone: text(fields.Phone) ?? text(fields.phone),
        fallbackName: `Tilda order ${orderId}`,
      }),
      ...(delivered === undefined
        ? {}
        : {
            delivery: {
              ...(delivered.address === undefined ? {} : { address: delivered.address }),
              ...(delivered.method === undefined ? {} : { method: delivered.method }),
              price: money(delivered.price, "payment.delivery_price"),
            },
          }),
      id: orderId,
      items,
      number: orderId,
      total: money(total, "payment.amount"),
    },
    payment: {
      amount: money(total, "payment.amount"),
      currency,
      id: delivery.transactionId.slice(0, 128),
      ...(sys === undefined ? {} : { provider: sys.slice(0, 128) }),
    },
  };
}

/** The event key: Tilda's order number, the same on each of its retries whatever happens to `tranid`. */
export function tildaKey(orderId: string): string {
  return `tilda:${keyPart(orderId)}`;
}

/**
 * An order-level discount (a promocode's) spread over the lines in
 * proportion to what each line costs, in cents, the cents left over by the
 * rounding down going to the lines with the largest remainders (the earlier
 * line on a tie): the discounted lines add up to the lines less the discount
 * exactly, and no line goes below zero. Returns each line's total after it.
 */
export function spreadDiscount(lineTotals: readonly bigint[], discount: bigint): bigint[] {
  return spreadOverLines(lineTotals, discount, { discount: "payment.discount", lines: "the products" });
}

interface Line {
  sku: string;
  name: string | undefined;
  quantity: number;
  lineTotal: bigint;
}

function productsOf(products: unknown): unknown[] {
  if (!Array.isArray(products) || products.length === 0) {
    throw new MappingError(
      products === undefined ? "payment.products is missing" : "payment.products is not a list of products",
    );
  }
  return products;
}

/** A product object ({name, quantity, amount, price, sku}) or Tilda's short form `"name=price"`. */
function lineOf(product: unknown, settings: SourceSettings): Line {
  if (typeof product === "string") {
    const at = product.lastIndexOf("=");
    if (at < 0) throw new MappingError(`the product ${quoted(product.slice(0, 80))} is not "name=price"`);
    const name = product.slice(0, at).trim();
    const lineTotal = minorUnits(product.slice(at + 1), `the price of "${name}"`);
    return { sku: skuOf(undefined, name, settings), name: name || undefined, quantity: 1, lineTotal };
  }
  if (typeof product !== "object" || product === null || Array.isArray(product)) {
    throw new MappingError(`a product is ${quoted(product)}, neither an object nor "name=price"`);
  }
  const fields = product as Record<string, unknown>;
  const name = text(fields.name)?.trim();
  const what = name === undefined ? "a product" : `"${name}"`;
  const quantity = quantityOf(fields.quantity, what);
  // `amount` is the line's total; a product that has only the unit price costs price × quantity.
  const lineTotal = present(fields.amount)
    ? minorUnits(fields.amount, `the amount of ${what}`)
    : minorUnits(fields.price, `the price of ${what}`) * BigInt(quantity);
  return { sku: skuOf(text(fields.sku), name, settings), name: name || undefined, quantity, lineTotal };
}

/** The product's own SKU, else its name through the sender's SKU map (`name:<product name>`). */
function skuOf(sku: string | undefined, name: string | undefined, settings: SourceSettings): string {
  return articleFor(sku, settings, name === undefined || name === "" ? [] : [`name:${name}`]);
}

function quantityOf(quantity: unknown, what: string): number {
  const given = text(quantity)?.trim();
  if (given === undefined || !/^[0-9]{1,7}$/.test(given) || Number(given) < 1) {
    throw new MappingError(`the quantity of ${what} is ${quoted(quantity ?? null)}, not a positive integer`);
  }
  return Number(given);
}

function deliveryOf(
  payment: Readonly<Record<string, unknown>>,
  settings: SourceSettings,
): { method: string | undefined; address: string | undefined; price: bigint } | undefined {
  const method = shippingMethodFor(text(payment.delivery), settings);
  const address = addressOf([text(payment.delivery_address)]);
  const priced = present(payment.delivery_price);
  if (!priced && method === undefined && address === undefined) return undefined;
  return {
    method,
    address,
    price: priced ? minorUnits(payment.delivery_price, "payment.delivery_price") : 0n,
  };
}

/** A field as text: Tilda sends strings in forms and strings or numbers in JSON. */
export function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== "";
}
