import { createHmac, randomUUID } from "node:crypto";

/**
 * Shopify `orders/paid` deliveries as Shopify sends them, for tests at any
 * level (adapter, HTTP, end to end). Self-contained: nothing from src/.
 *
 * - Field names are those of Shopify's REST Order resource and its sample
 *   `orders/paid` payload (docs/platform-webhooks.md §1.6, §1.7).
 * - Ids are bigint here and written into the body as bare JSON integers, as
 *   Shopify writes them: 820982911946154508 is past 2^53, so JSON.parse on
 *   the receiving side rounds it (the reason the adapter keys on
 *   `admin_graphql_api_id`). Build the body with `shopifyBody`, never with
 *   JSON.stringify, which cannot write a bigint.
 * - `sign` is the documented algorithm (§1.2): base64 of HMAC-SHA256 over the
 *   raw body bytes, keyed with the app's client secret.
 */

/** A `*_set` money pair: the shop's currency and the customer's (presentment) one. */
export interface MoneySet {
  shop_money: { amount: string; currency_code: string };
  presentment_money: { amount: string; currency_code: string };
}

export interface ShopifyTaxLine {
  title: string;
  rate: number;
  price: string;
  price_set?: MoneySet;
}

export interface ShopifyDiscountAllocation {
  amount: string;
  amount_set?: MoneySet;
  discount_application_index: number;
}

export interface ShopifyLineItem {
  id: bigint | number;
  admin_graphql_api_id?: string;
  variant_id: bigint | number | null;
  product_id: bigint | number | null;
  sku: string | null;
  title: string;
  name?: string;
  quantity: number;
  /**
   * The units still on the order: `quantity` less the units removed by an
   * order edit or refunded (REST 2024-01 on, "the line item's current
   * quantity after removals"). `quantity` keeps the units ordered.
   */
  current_quantity?: number;
  /** The unit price before discounts; with tax when the order's taxes_included is true. */
  price: string;
  price_set?: MoneySet;
  total_discount: string;
  discount_allocations: ShopifyDiscountAllocation[];
  tax_lines: ShopifyTaxLine[];
  gift_card?: boolean;
  requires_shipping?: boolean;
  taxable?: boolean;
  product_exists?: boolean;
  fulfillment_status?: string | null;
  /** "The payment gateway used to tender the tip, such as shopify_payments. Present only on tips." (null is present). */
  tip_payment_gateway?: string | null;
  /** "The payment method used to tender the tip, such as Visa. Present only on tips." */
  tip_payment_method?: string | null;
}

export interface ShopifyShippingLine {
  id: bigint | number;
  code: string | null;
  title: string;
  source: string;
  price: string;
  price_set?: MoneySet;
  /** The price after shipping discounts (with tax when taxes_included). */
  discounted_price: string;
  discounted_price_set?: MoneySet;
  discount_allocations: ShopifyDiscountAllocation[];
  tax_lines: ShopifyTaxLine[];
  is_removed?: boolean;
}

export interface ShopifyAddress {
  name: string | null;
  first_name?: string | null;
  last_name?: string | null;
  address1: string | null;
  address2?: string | null;
  city: string | null;
  province?: string | null;
  zip: string | null;
  country?: string | null;
  country_code: string | null;
  phone?: string | null;
}

export interface ShopifyCustomer {
  id: bigint | number;
  admin_graphql_api_id?: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  phone?: string | null;
}

/** The REST Order resource, the fields the adapter reads and a few around them. */
export interface ShopifyOrder {
  id: bigint | number;
  admin_graphql_api_id?: string;
  name: string;
  order_number: number;
  test: boolean;
  created_at: string;
  processed_at?: string;
  cancelled_at?: string | null;
  currency: string;
  presentment_currency: string;
  financial_status: string;
  taxes_included: boolean;
  /** What the customer paid, in the shop's currency. */
  total_price: string;
  subtotal_price: string;
  /** The tax in total_price (contained in the prices when taxes_included, added on top otherwise). */
  total_tax: string;
  total_discounts: string;
  /** The total after order edits, returns and refunds; `total_price` may stay the total as placed. */
  current_total_price: string;
  current_subtotal_price?: string;
  current_total_tax?: string;
  current_total_price_set?: MoneySet;
  /** The sum of the tips in the order (shop currency). */
  total_tip_received?: string;
  total_price_set: MoneySet;
  total_tax_set?: MoneySet;
  total_shipping_price_set: MoneySet;
  payment_gateway_names?: string[];
  email: string | null;
  phone?: string | null;
  customer: ShopifyCustomer | null;
  billing_address: ShopifyAddress | null;
  shipping_address: ShopifyAddress | null;
  line_items: ShopifyLineItem[];
  shipping_lines: ShopifyShippingLine[];
}

export const SHOPIFY_SECRET = "shpss_test_secret";
export const SHOPIFY_SHOP = "example.myshopify.com";

/** The documented test vector (§1.2, computed with openssl): `sign('{"id":1}', "shpss_test_secret")`. */
export const SHOPIFY_TEST_VECTOR = {
  secret: "shpss_test_secret",
  body: '{"id":1}',
  hmac: "K2XDCjoIIQnsCAW9wJNjHt4VwaiFCMoHAkXVA+JPSq0=",
} as const;

/** A money pair in one currency for both sides (a single-currency shop). */
export function moneySet(
  amount: string,
  currency: string,
  presentment?: { amount: string; currency: string },
): MoneySet {
  return {
    shop_money: { amount, currency_code: currency },
    presentment_money: { amount: presentment?.amount ?? amount, currency_code: presentment?.currency ?? currency },
  };
}

/**
 * The §1.7 line: 2 × "Tea" at 50.00, 20 % VAT included (16.67). Its
 * current_quantity is its quantity (nothing removed) unless given.
 */
export function shopifyLineItem(overrides: Partial<ShopifyLineItem> = {}): ShopifyLineItem {
  const line: ShopifyLineItem = {
    id: 487817672276298554n,
    variant_id: 642667041472713922n,
    product_id: 788032119674292922n,
    sku: "SKU-001",
    title: "Tea",
    quantity: 2,
    price: "50.00",
    total_discount: "0.00",
    price_set: moneySet("50.00", "RUB"),
    discount_allocations: [],
    tax_lines: [{ title: "VAT", rate: 0.2, price: "16.67" }],
    ...overrides,
  };
  return { ...line, current_quantity: overrides.current_quantity ?? line.quantity };
}

/**
 * A tip as Shopify writes it into line_items: no SKU, variant or product, not
 * shippable or taxable, and `tip_payment_gateway` / `tip_payment_method`,
 * which the REST Order resource documents as "present only on tips" (present
 * with null when the gateway is not known). The other values are those of a
 * real order's tip line (community.shopify.com/t/topic/410117, secondary):
 * title and name "Tip", product_exists false, fulfillment_status "not_eligible".
 */
export function shopifyTipLine(amount: string, currency: string, overrides: Partial<ShopifyLineItem> = {}) {
  return shopifyLineItem({
    id: 16365225869621,
    variant_id: null,
    product_id: null,
    sku: null,
    title: "Tip",
    name: "Tip",
    quantity: 1,
    price: amount,
    price_set: moneySet(amount, currency),
    total_discount: "0.00",
    discount_allocations: [],
    tax_lines: [],
    gift_card: false,
    requires_shipping: false,
    taxable: false,
    product_exists: false,
    fulfillment_status: "not_eligible",
    tip_payment_gateway: null,
    tip_payment_method: null,
    ...overrides,
  });
}

/** The §1.7 shipping line: courier, 10.00 with 20 % VAT included (1.67). */
export function shopifyShippingLine(overrides: Partial<ShopifyShippingLine> = {}): ShopifyShippingLine {
  return {
    id: 271878346596884015n,
    code: "courier",
    title: "Courier",
    source: "shopify",
    price: "10.00",
    discounted_price: "10.00",
    discount_allocations: [],
    tax_lines: [{ title: "VAT", rate: 0.2, price: "1.67" }],
    ...overrides,
  };
}

/**
 * The §1.7 example (Shopify's sample order 820982911946154508, amounts made
 * consistent): RUB, 2 × 50.00 + 10.00 shipping = 110.00 paid, tax included
 * 18.34. Overrides replace top-level fields; current_total_price is
 * total_price (an order not edited) unless given.
 */
export function shopifyOrder(overrides: Partial<ShopifyOrder> = {}): ShopifyOrder {
  const address: ShopifyAddress = {
    name: "Jon Doe",
    address1: "ul. Lenina 1",
    city: "Moskva",
    zip: "101000",
    country_code: "RU",
  };
  return {
    id: 820982911946154508n,
    admin_graphql_api_id: "gid://shopify/Order/820982911946154508",
    name: "#1001",
    order_number: 1001,
    test: false,
    created_at: "2026-03-01T10:00:00+03:00",
    currency: "RUB",
    presentment_currency: "RUB",
    financial_status: "paid",
    taxes_included: true,
    total_price: "110.00",
    subtotal_price: "100.00",
    total_tax: "18.34",
    total_discounts: "0.00",
    current_total_price: overrides.total_price ?? "110.00",
    total_price_set: moneySet("110.00", "RUB"),
    total_shipping_price_set: moneySet("10.00", "RUB"),
    email: "jon@example.com",
    customer: { id: 115310627314723954n, email: "jon@example.com", first_name: "Jon", last_name: "Doe" },
    billing_address: { ...address },
    shipping_address: { ...address },
    line_items: [shopifyLineItem()],
    shipping_lines: [shopifyShippingLine()],
    ...overrides,
  };
}

/** The body's text as Shopify writes it: ids (bigint) as bare integers, every digit kept. */
export function shopifyBody(order: unknown): string {
  const marked = JSON.stringify(order, (_key, value: unknown) =>
    typeof value === "bigint" ? `${BIGINT_MARK}${value}` : value,
  );
  return marked.replace(new RegExp(`"${BIGINT_MARK}(-?[0-9]+)"`, "g"), "$1");
}

/** No Shopify field holds this text, so only the marked ids are unquoted. */
const BIGINT_MARK = "__shopify_bigint__:";

/** base64( HMAC-SHA256( key = utf8(secret), message = raw body bytes ) ), §1.2. */
export function sign(body: Buffer | string, secret: string): string {
  return createHmac("sha256", secret).update(body).digest("base64");
}

export interface ShopifyHeaderOptions {
  secret?: string;
  topic?: string;
  shopDomain?: string;
  apiVersion?: string;
  webhookId?: string;
  eventId?: string;
  triggeredAt?: string;
}

/**
 * The headers of one delivery of `body` (names in lower case, as Node gives
 * them), signed with `secret` (SHOPIFY_SECRET by default). Each call makes a
 * new X-Shopify-Webhook-Id unless one is given: pass the same one for a retry.
 */
export function shopifyHeaders(body: Buffer | string, options: ShopifyHeaderOptions = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    "x-shopify-topic": options.topic ?? "orders/paid",
    "x-shopify-shop-domain": options.shopDomain ?? SHOPIFY_SHOP,
    "x-shopify-api-version": options.apiVersion ?? "2025-01",
    "x-shopify-webhook-id": options.webhookId ?? randomUUID(),
    "x-shopify-event-id": options.eventId ?? randomUUID(),
    "x-shopify-triggered-at": options.triggeredAt ?? "2026-03-01T07:00:01.123Z",
    "x-shopify-hmac-sha256": sign(body, options.secret ?? SHOPIFY_SECRET),
  };
}
