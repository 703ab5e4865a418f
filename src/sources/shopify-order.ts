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
  quoted,
  shippingMethodFor,
} from "./mapping.ts";
import type { SourceSettings } from "./port.ts";

/**
 * Shopify's REST Order resource (the `orders/paid` body, docs/platform-webhooks.md
 * §1.6) as our order-paid event. Pure; every failure is a MappingError.
 */

export type Json = Readonly<Record<string, unknown>>;

export function objectOf(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

/** A non-empty string, else undefined: Shopify writes "" and null alike for an absent value. */
export function textOf(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function listOf(value: unknown): Json[] {
  const list: Json[] = [];
  if (!Array.isArray(value)) return list;
  for (const item of value) {
    const record = objectOf(item);
    if (record !== undefined) list.push(record);
  }
  return list;
}

/**
 * The digits of a Shopify GraphQL id ("gid://shopify/Order/820982911946154508"),
 * else the numeric `id` when it is a safe integer. The GraphQL id comes first
 * because Shopify's numeric ids reach 2^63 and JSON.parse rounds anything past
 * 2^53: 820982911946154508 parses as 820982911946154500, another order's id.
 */
export function shopifyId(record: Json | undefined, kind: "Order" | "Customer"): string | undefined {
  const gid = record?.admin_graphql_api_id;
  const prefix = GID_PREFIX[kind];
  if (typeof gid === "string" && gid.startsWith(prefix) && isDigits(gid, prefix.length, 20)) {
    return gid.slice(prefix.length);
  }
  const id = record?.id;
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? String(id) : undefined;
}

const GID_PREFIX = { Order: "gid://shopify/Order/", Customer: "gid://shopify/Customer/" } as const;

/** Whether `text` from `start` to its end is 1 to `most` ASCII digits. */
function isDigits(text: string, start: number, most: number): boolean {
  const count = text.length - start;
  if (count < 1 || count > most) return false;
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/** Which of the payload's two currencies is booked, and where its amounts are. */
interface Money {
  /** An amount in minor units: the plain string or its `*_set` (see moneyOf). */
  of(record: Json, field: AmountField, what: string): bigint;
  currency: unknown;
}

/** The amounts read, each with its `*_set`: the set's name is looked up, never built per call. */
const AMOUNT_SETS = {
  price: "price_set",
  amount: "amount_set",
  total_price: "total_price_set",
  total_tax: "total_tax_set",
} as const;

type AmountField = keyof typeof AMOUNT_SETS;

/**
 * settings.money "shop" (the default) books the shop's currency: the plain
 * strings, or `*_set.shop_money` where Shopify sends only the set (shipping
 * totals). "presentment" books what the customer paid: `*_set.presentment_money`;
 * an amount Shopify sent without its set (older API versions' tax and shipping
 * lines) is the plain string only while both currencies are one, and a
 * mapping error otherwise, never a figure in the wrong currency.
 */
function moneyOf(order: Json, settings: SourceSettings): Money {
  const presentment = settings.money === "presentment";
  const sameCurrency = order.presentment_currency == null || order.presentment_currency === order.currency;
  return {
    currency: presentment ? (order.presentment_currency ?? order.currency) : order.currency,
    of(record, field, what) {
      const set = objectOf(record[AMOUNT_SETS[field]]);
      const fromSet = objectOf(set?.[presentment ? "presentment_money" : "shop_money"])?.amount;
      const plain = record[field];
      const amount = presentment ? (fromSet ?? (sameCurrency ? plain : undefined)) : (plain ?? fromSet);
      if (amount === undefined || amount === null) {
        throw new MappingError(
          presentment
            ? `${what}: ${field}_set.presentment_money is missing (the sender books the presentment currency)`
            : `${what}: ${field} is missing`,
        );
      }
      return minorUnits(amount, what);
    },
  };
}

/** The sum of `field` over a list's records (Shopify's discount allocations, tax lines); `what` names one of them in an error. */
function sumOf(list: unknown, amounts: Money, field: AmountField, what: string): bigint {
  let sum = 0n;
  for (const record of listOf(list)) sum += amounts.of(record, field, what);
  return sum;
}

/** What the customer paid for a line or a shipping line: its price after its discounts, with its tax when prices exclude it. */
function grossOf(base: bigint, record: Json, amounts: Money, taxesIncluded: boolean, what: string): bigint {
  const discount = sumOf(record.discount_allocations, amounts, "amount", `${what}'s discount`);
  const tax = taxesIncluded ? 0n : sumOf(record.tax_lines, amounts, "price", `${what}'s tax`);
  return base - discount + tax;
}

/**
 * The SKU map's other names for a line with no SKU: `variant:<id>`, then
 * `product:<id>`. Shopify's REST line item carries no GraphQL id for its
 * variant or product, so only the numbers are there; one past 2^53 was
 * rounded by JSON.parse and could name another variant, so it is not offered
 * (real ids are 14 digits today; the map then needs the line's SKU).
 */
function skuFallbacks(line: Json): string[] {
  const ids: string[] = [];
  const variant = line.variant_id;
  const product = line.product_id;
  if (isSafeId(variant)) ids.push(`variant:${variant}`);
  if (isSafeId(product)) ids.push(`product:${product}`);
  return ids;
}

function isSafeId(id: unknown): id is number {
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0;
}

/**
 * A tip: Shopify writes it as a line item with no SKU, variant or product,
 * marked by `tip_payment_gateway` and `tip_payment_method`, which the REST
 * Order resource documents as "present only on tips" (null when unknown, so
 * it is the field's presence that tells).
 */
function isTip(line: Json): boolean {
  return Object.hasOwn(line, "tip_payment_gateway") || Object.hasOwn(line, "tip_payment_method");
}

/** The SKU map's name for a tip: no article exists for it in the shop's catalogue. */
const TIP_SKU = "tip";

function itemsOf(
  lines: readonly Json[],
  amounts: Money,
  settings: SourceSettings,
  taxesIncluded: boolean,
): { items: Item[]; sum: bigint } {
  if (lines.length === 0) throw new MappingError("the order has no line_items");
  const items: Item[] = [];
  let sum = 0n;
  for (const [index, line] of lines.entries()) {
    const what = `line_items[${index}]`;
    const quantity = line.quantity;
    if (typeof quantity !== "number" || !Number.isSafeInteger(quantity) || quantity < 1) {
      throw new MappingError(`${what} has quantity ${quoted(quantity)}`);
    }
    const gross = grossOf(amounts.of(line, "price", what) * BigInt(quantity), line, amounts, taxesIncluded, what);
    const skuText = textOf(line.sku);
    const sku = isTip(line)
      ? tipArticle(settings, gross, what)
      : articleFor(skuText, settings, skuText === undefined ? skuFallbacks(line) : []);
    if (gross < 0n) throw new MappingError(`${what} (SKU "${sku}") comes out negative after its discounts`);
    items.push(...itemsForLine({ sku, name: textOf(line.name) ?? textOf(line.title), quantity, lineTotal: gross }));
    sum += gross;
  }
  return { items, sum };
}

/** A tip's 1C article: the SKU map's entry for `tip`, else a mapping error that says so. */
function tipArticle(settings: SourceSettings, gross: bigint, what: string): string {
  const article = settings.skus?.get(TIP_SKU);
  if (article !== undefined) return article;
  throw new MappingError(
    `${what} is a tip of ${money(gross, "the tip")}: map "${TIP_SKU}" in the sender's SKU map to book it`,
  );
}

/**
 * Why an order cannot be booked from its lines as they stand: it was edited
 * after it was placed (a manual payment, cash on delivery or bank transfer, is
 * captured after an edit). Shopify then keeps each line's ordered `quantity`
 * and its discount allocations, removed units included; `current_quantity`
 * and `current_total_price` are what is left, and what the customer paid.
 * Which discounts and taxes went with the removed units the payload does not
 * say, so the order is left to support rather than booked at a guess.
 * Undefined for an order not edited. Older API versions (before 2024-01) have
 * no current_quantity; current_total_price still tells.
 */
function editOf(order: Json, lines: readonly Json[]): string | undefined {
  const changes: string[] = [];
  const placedSet = objectOf(order.total_price_set);
  const currentSet = objectOf(order.current_total_price_set);
  for (const [now, then] of [
    [order.current_total_price, order.total_price],
    [moneyIn(currentSet, "shop_money"), moneyIn(placedSet, "shop_money")],
    [moneyIn(currentSet, "presentment_money"), moneyIn(placedSet, "presentment_money")],
  ]) {
    // Compared as numbers, not read as the booked money: a presentment currency may have three decimals.
    if (isAmountLike(now) && isAmountLike(then) && Number(now) !== Number(then)) {
      changes.push(`current_total_price ${now} is not total_price ${then}`);
      break;
    }
  }
  for (const [index, line] of lines.entries()) {
    const now = line.current_quantity;
    if (typeof now === "number" && now !== line.quantity) {
      const name = textOf(line.name) ?? textOf(line.title) ?? "";
      changes.push(`line_items[${index}] "${name}" has current_quantity ${now} of quantity ${quoted(line.quantity)}`);
    }
  }
  if (changes.length === 0) return undefined;
  return `the order was edited after it was placed (${changes.join("; ")}): its lines still hold the units and discounts as ordered, so support books it by hand`;
}

/** A `*_set`'s amount in one of its two currencies. */
function moneyIn(set: Json | undefined, which: "shop_money" | "presentment_money"): unknown {
  return objectOf(set?.[which])?.amount;
}

function isAmountLike(amount: unknown): amount is string | number {
  return typeof amount === "string" || typeof amount === "number";
}

type Delivery = NonNullable<OrderPaidEvent["order"]["delivery"]>;

function deliveryOf(
  order: Json,
  amounts: Money,
  settings: SourceSettings,
  taxesIncluded: boolean,
): { delivery: Delivery; price: bigint } | undefined {
  let first: Json | undefined;
  let price = 0n;
  for (const line of listOf(order.shipping_lines)) {
    if (line.is_removed === true) continue;
    first ??= line;
    const what = `shipping line "${textOf(line.title) ?? textOf(line.code) ?? ""}"`;
    price += grossOf(amounts.of(line, "price", what), line, amounts, taxesIncluded, what);
  }
  if (first === undefined) return undefined;
  const method = shippingMethodFor(textOf(first.code) ?? textOf(first.title), settings);
  const to = objectOf(order.shipping_address);
  const address = addressOf([
    to?.address1,
    to?.address2,
    to?.city,
    to?.province,
    to?.zip,
    textOf(to?.country) ?? to?.country_code,
  ]);
  // Keys in canonical order (fingerprint.ts writes such an event with JSON.stringify), as in shopifyOrderEvent.
  const delivery: Delivery = {
    ...(address === undefined ? {} : { address }),
    ...(method === undefined ? {} : { method }),
    price: money(price, "the shipping price"),
  };
  return { delivery, price };
}

function customerFor(order: Json, name: string): OrderPaidEvent["order"]["customer"] {
  const customer = objectOf(order.customer);
  const billing = objectOf(order.billing_address);
  const shipping = objectOf(order.shipping_address);
  const first = textOf(customer?.first_name);
  const last = textOf(customer?.last_name);
  const fullName = first === undefined ? last : last === undefined ? first : `${first} ${last}`;
  return customerOf({
    id: shopifyId(customer, "Customer"),
    names: [fullName, textOf(billing?.name), textOf(shipping?.name)],
    email: textOf(order.email) ?? textOf(customer?.email),
    phone: textOf(order.phone) ?? textOf(customer?.phone) ?? textOf(billing?.phone),
    fallbackName: `Shopify order ${name}`,
  });
}

/** The order-paid event of a paid Shopify order keyed `eventId`; throws MappingError. */
export function shopifyOrderEvent(
  order: Json,
  orderId: string,
  eventId: string,
  settings: SourceSettings,
): OrderPaidEvent {
  const amounts = moneyOf(order, settings);
  const currency = currencyFor(amounts.currency, settings);
  const lines = listOf(order.line_items);
  const edit = editOf(order, lines);
  if (edit !== undefined) throw new MappingError(edit);
  const taxesIncluded = order.taxes_included === true;
  const { items, sum: added } = itemsOf(lines, amounts, settings, taxesIncluded);
  const shipping = deliveryOf(order, amounts, settings, taxesIncluded);
  const total = amounts.of(order, "total_price", "the order's total");
  const sum = added + (shipping?.price ?? 0n);
  if (sum !== total) {
    throw new MappingError(
      `total_price ${money(total, "total_price")} is not what the lines and shipping add up to (${money(sum, "the sum")})`,
    );
  }
  const hasTax = order.total_tax != null || order.total_tax_set != null;
  const tax = hasTax ? money(amounts.of(order, "total_tax", "the order's tax"), "total_tax") : undefined;
  const name = textOf(order.name) ?? (typeof order.order_number === "number" ? `#${order.order_number}` : orderId);
  const createdAt = textOf(order.created_at);
  const processedAt = textOf(order.processed_at);
  const occurredAt = processedAt ?? createdAt;
  if (occurredAt === undefined) throw new MappingError("the order has neither processed_at nor created_at");
  const provider = gatewayOf(order.payment_gateway_names);
  const amount = money(total, "total_price");
  // Keys in canonical order, every object: fingerprint.ts then writes the event with JSON.stringify.
  return {
    event_id: eventId,
    event_type: "order.paid",
    occurred_at: occurredAt,
    order: {
      ...(createdAt === undefined ? {} : { created_at: createdAt }),
      currency,
      customer: customerFor(order, name),
      ...(shipping === undefined ? {} : { delivery: shipping.delivery }),
      id: orderId,
      items,
      number: name.slice(0, 128),
      ...(tax === undefined ? {} : { tax }),
      total: amount,
    },
    payment: {
      amount,
      currency,
      id: orderId,
      ...(processedAt === undefined ? {} : { paid_at: processedAt }),
      ...(provider === undefined ? {} : { provider }),
    },
  };
}

/**
 * The payment's provider: the first of `payment_gateway_names` that is not a
 * gift card, since a gift card that paid part of the order is listed first
 * (["gift_card", "shopify_payments"]); "gift_card" when it paid it all.
 */
function gatewayOf(names: unknown): string | undefined {
  const given = (Array.isArray(names) ? names : []).flatMap((name) => textOf(name)?.trim() ?? []);
  const chosen = given.find((name) => name !== "gift_card") ?? given[0];
  return chosen?.slice(0, 128);
}
