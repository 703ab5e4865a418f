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
  return Array.isArray(value) ? value.map(objectOf).filter((item) => item !== undefined) : [];
}

/**
 * The digits of a Shopify GraphQL id ("gid://shopify/Order/820982911946154508"),
 * else the numeric `id` when it is a safe integer. The GraphQL id comes first
 * because Shopify's numeric ids reach 2^63 and JSON.parse rounds anything past
 * 2^53: 820982911946154508 parses as 820982911946154500, another order's id.
 */
export function shopifyId(record: Json | undefined, kind: string): string | undefined {
  const gid = textOf(record?.admin_graphql_api_id);
  const digits = gid === undefined ? undefined : new RegExp(`^gid://shopify/${kind}/([0-9]{1,20})$`).exec(gid)?.[1];
  if (digits !== undefined) return digits;
  const id = record?.id;
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? String(id) : undefined;
}

/** Which of the payload's two currencies is booked, and where its amounts are. */
interface Money {
  /** An amount in minor units: the plain string or its `*_set` (see moneyOf). */
  of(record: Json, field: string, what: string): bigint;
  currency: unknown;
}

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
      const set = objectOf(record[`${field}_set`]);
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

function sumOf(records: readonly Json[], add: (record: Json) => bigint): bigint {
  return records.reduce((sum, record) => sum + add(record), 0n);
}

/** What the customer paid for a line or a shipping line: its price after its discounts, with its tax when prices exclude it. */
function grossOf(base: bigint, record: Json, amounts: Money, taxesIncluded: boolean, what: string): bigint {
  const discount = sumOf(listOf(record.discount_allocations), (d) => amounts.of(d, "amount", `${what}'s discount`));
  const tax = taxesIncluded ? 0n : sumOf(listOf(record.tax_lines), (t) => amounts.of(t, "price", `${what}'s tax`));
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
  for (const [kind, field] of [
    ["variant", "variant_id"],
    ["product", "product_id"],
  ] as const) {
    const id = line[field];
    if (typeof id === "number" && Number.isSafeInteger(id) && id > 0) ids.push(`${kind}:${id}`);
  }
  return ids;
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

function itemsOf(order: Json, amounts: Money, settings: SourceSettings, taxesIncluded: boolean): Item[] {
  const lines = listOf(order.line_items);
  if (lines.length === 0) throw new MappingError("the order has no line_items");
  return lines.flatMap((line, index) => {
    const what = `line_items[${index}]`;
    const quantity = line.quantity;
    if (typeof quantity !== "number" || !Number.isSafeInteger(quantity) || quantity < 1) {
      throw new MappingError(`${what} has quantity ${JSON.stringify(quantity)}`);
    }
    const gross = grossOf(amounts.of(line, "price", what) * BigInt(quantity), line, amounts, taxesIncluded, what);
    const sku = isTip(line)
      ? tipArticle(settings, gross, what)
      : articleFor(textOf(line.sku), settings, skuFallbacks(line));
    if (gross < 0n) throw new MappingError(`${what} (SKU "${sku}") comes out negative after its discounts`);
    return itemsForLine({ sku, name: textOf(line.name) ?? textOf(line.title), quantity, lineTotal: gross });
  });
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
function editOf(order: Json): string | undefined {
  const changes: string[] = [];
  const placed = amountsOf(order, "total_price");
  const current = amountsOf(order, "current_total_price");
  for (const [index, now] of current.entries()) {
    const then = placed[index];
    // Compared as numbers, not read as the booked money: a presentment currency may have three decimals.
    if (now !== undefined && then !== undefined && Number(now) !== Number(then)) {
      changes.push(`current_total_price ${now} is not total_price ${then}`);
      break;
    }
  }
  for (const [index, line] of listOf(order.line_items).entries()) {
    const now = line.current_quantity;
    if (typeof now === "number" && now !== line.quantity) {
      const name = textOf(line.name) ?? textOf(line.title) ?? "";
      changes.push(
        `line_items[${index}] "${name}" has current_quantity ${now} of quantity ${JSON.stringify(line.quantity)}`,
      );
    }
  }
  if (changes.length === 0) return undefined;
  return `the order was edited after it was placed (${changes.join("; ")}): its lines still hold the units and discounts as ordered, so support books it by hand`;
}

/** A total as the plain string, the set's shop money and its presentment money (undefined where absent). */
function amountsOf(order: Json, field: string): Array<string | undefined> {
  const set = objectOf(order[`${field}_set`]);
  const plain = order[field];
  return [plain, objectOf(set?.shop_money)?.amount, objectOf(set?.presentment_money)?.amount].map((amount) =>
    typeof amount === "string" || typeof amount === "number" ? String(amount) : undefined,
  );
}

type Delivery = NonNullable<OrderPaidEvent["order"]["delivery"]>;

function deliveryOf(
  order: Json,
  amounts: Money,
  settings: SourceSettings,
  taxesIncluded: boolean,
): { delivery: Delivery; price: bigint } | undefined {
  const lines = listOf(order.shipping_lines).filter((line) => line.is_removed !== true);
  if (lines.length === 0) return undefined;
  const price = sumOf(lines, (line) => {
    const what = `shipping line "${textOf(line.title) ?? textOf(line.code) ?? ""}"`;
    return grossOf(amounts.of(line, "price", what), line, amounts, taxesIncluded, what);
  });
  const first = lines[0] as Json;
  const method = shippingMethodFor(textOf(first.code) ?? textOf(first.title), settings);
  const to = objectOf(order.shipping_address);
  const address = addressOf([
    ...["address1", "address2", "city", "province", "zip"].map((field) => textOf(to?.[field])),
    textOf(to?.country) ?? textOf(to?.country_code),
  ]);
  return {
    delivery: {
      ...(method === undefined ? {} : { method }),
      ...(address === undefined ? {} : { address }),
      price: money(price, "the shipping price"),
    },
    price,
  };
}

function customerFor(order: Json, name: string): OrderPaidEvent["order"]["customer"] {
  const customer = objectOf(order.customer);
  const billing = objectOf(order.billing_address);
  const shipping = objectOf(order.shipping_address);
  const fullName = [textOf(customer?.first_name), textOf(customer?.last_name)].filter(Boolean).join(" ");
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
  const edit = editOf(order);
  if (edit !== undefined) throw new MappingError(edit);
  const taxesIncluded = order.taxes_included === true;
  const items = itemsOf(order, amounts, settings, taxesIncluded);
  const shipping = deliveryOf(order, amounts, settings, taxesIncluded);
  const total = amounts.of(order, "total_price", "the order's total");
  const added = items.reduce((sum, item) => sum + BigInt(item.quantity) * minorUnits(item.price, "a price"), 0n);
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
  return {
    event_id: eventId,
    event_type: "order.paid",
    occurred_at: occurredAt,
    order: {
      id: orderId,
      number: name.slice(0, 128),
      ...(createdAt === undefined ? {} : { created_at: createdAt }),
      customer: customerFor(order, name),
      items,
      ...(shipping === undefined ? {} : { delivery: shipping.delivery }),
      total: amount,
      ...(tax === undefined ? {} : { tax }),
      currency,
    },
    payment: {
      id: orderId,
      ...(provider === undefined ? {} : { provider }),
      amount,
      currency,
      ...(processedAt === undefined ? {} : { paid_at: processedAt }),
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
