import { createHmac, randomBytes } from "node:crypto";

/**
 * WooCommerce's order webhook as WooCommerce sends it, for tests at any level
 * (the adapter's unit tests, end-to-end tests through the HTTP edge).
 * Self-contained: it imports nothing from src, so a test built on it checks
 * the gateway against WooCommerce, not against the gateway's own reading.
 *
 * Sources (docs/platform-webhooks.md §2):
 * - the order: REST API v3 "Create an order" output example, order 727
 *   (woocommerce-rest-api-docs `source/includes/wp-api-v3/_orders.md`),
 *   every field as documented, `_links` left out (the webhook payload has none);
 * - the headers: `WC_Webhook::deliver` (class-wc-webhook.php), names as Node
 *   gives them (lower case);
 * - the body: `trim( wp_json_encode( $payload ) )`, i.e. PHP's json_encode
 *   with its default flags, which escapes "/" and non-ASCII characters;
 * - the signature: `base64_encode( hash_hmac( 'sha256', $body, $secret, true ) )`;
 * - the ping: `WC_Webhook::deliver_ping`, the body `webhook_id=<id>` and no X-WC-* header.
 */

/** The secret the fixtures sign with unless told otherwise. */
export const WOO_SECRET = "wc_test_secret";

/** §2.2's openssl vector: `printf '{"id":1}' | openssl dgst -sha256 -hmac wc_test_secret -binary | base64`. */
export const WOO_TEST_VECTOR = {
  secret: "wc_test_secret",
  body: '{"id":1}',
  signature: "drgh06S8p8LrCMoBByVAgc0gUObL4+aq0oGxszn/KJ8=",
} as const;

/** X-WC-Webhook-Signature: base64 HMAC-SHA256 of the raw body, keyed with the webhook's secret. */
export function sign(body: Buffer | string, secret: string = WOO_SECRET): string {
  return createHmac("sha256", secret).update(body).digest("base64");
}

export interface WooAddress {
  first_name: string;
  last_name: string;
  company: string;
  address_1: string;
  address_2: string;
  city: string;
  state: string;
  postcode: string;
  country: string;
  email?: string;
  phone?: string;
}

export interface WooTax {
  id: number;
  total: string;
  subtotal: string;
}

export interface WooMeta {
  id: number;
  key: string;
  value: string;
}

export interface WooLineItem {
  id: number;
  name: string;
  product_id: number;
  variation_id: number;
  quantity: number;
  tax_class: string;
  /** Before coupons, without tax. */
  subtotal: string;
  subtotal_tax: string;
  /** After coupons, without tax (even when prices_include_tax is true). */
  total: string;
  total_tax: string;
  taxes: WooTax[];
  meta_data: WooMeta[];
  sku: string;
  /** subtotal / quantity as a float: not money. */
  price: number;
}

export interface WooShippingLine {
  id: number;
  method_title: string;
  method_id: string;
  total: string;
  total_tax: string;
  taxes: WooTax[];
  meta_data: WooMeta[];
}

export interface WooFeeLine {
  id: number;
  name: string;
  tax_class: string;
  tax_status: string;
  total: string;
  total_tax: string;
  taxes: WooTax[];
  meta_data: WooMeta[];
}

export interface WooCouponLine {
  id: number;
  code: string;
  discount: string;
  discount_tax: string;
  meta_data: WooMeta[];
}

export interface WooTaxLine {
  id: number;
  rate_code: string;
  rate_id: number;
  label: string;
  compound: boolean;
  tax_total: string;
  shipping_tax_total: string;
  meta_data: WooMeta[];
}

export interface WooOrder {
  id: number;
  parent_id: number;
  number: string;
  order_key: string;
  created_via: string;
  version: string;
  status: string;
  currency: string;
  date_created: string;
  date_created_gmt: string;
  date_modified: string;
  date_modified_gmt: string;
  discount_total: string;
  discount_tax: string;
  shipping_total: string;
  shipping_tax: string;
  cart_tax: string;
  total: string;
  total_tax: string;
  prices_include_tax: boolean;
  customer_id: number;
  customer_ip_address: string;
  customer_user_agent: string;
  customer_note: string;
  billing: WooAddress;
  shipping: WooAddress;
  payment_method: string;
  payment_method_title: string;
  transaction_id: string;
  date_paid: string | null;
  date_paid_gmt: string | null;
  date_completed: string | null;
  date_completed_gmt: string | null;
  cart_hash: string;
  meta_data: WooMeta[];
  line_items: WooLineItem[];
  tax_lines: WooTaxLine[];
  shipping_lines: WooShippingLine[];
  fee_lines: WooFeeLine[];
  coupon_lines: WooCouponLine[];
  refunds: Array<{ id: number; refund: string; total: string }>;
}

/** Line 315 of order 727: two "Woo Single #1" without a SKU, 6.00 + 0.45 tax. */
export function wooLineItem(overrides: Partial<WooLineItem> = {}): WooLineItem {
  return {
    id: 315,
    name: "Woo Single #1",
    product_id: 93,
    variation_id: 0,
    quantity: 2,
    tax_class: "",
    subtotal: "6.00",
    subtotal_tax: "0.45",
    total: "6.00",
    total_tax: "0.45",
    taxes: [{ id: 75, total: "0.45", subtotal: "0.45" }],
    meta_data: [],
    sku: "",
    price: 3,
    ...overrides,
  };
}

/** Line 316 of order 727: a variation with SKU "Bar3", 12.00 + "0.9" tax in its taxes. */
export function wooVariationLine(overrides: Partial<WooLineItem> = {}): WooLineItem {
  return wooLineItem({
    id: 316,
    name: "Ship Your Idea &ndash; Color: Black, Size: M Test",
    product_id: 22,
    variation_id: 23,
    quantity: 1,
    subtotal: "12.00",
    subtotal_tax: "0.90",
    total: "12.00",
    total_tax: "0.90",
    taxes: [{ id: 75, total: "0.9", subtotal: "0.9" }],
    meta_data: [
      { id: 2095, key: "pa_color", value: "black" },
      { id: 2096, key: "size", value: "M Test" },
    ],
    sku: "Bar3",
    price: 12,
    ...overrides,
  });
}

/** Shipping line 317 of order 727: Flat Rate, 10.00, no tax. */
export function wooShippingLine(overrides: Partial<WooShippingLine> = {}): WooShippingLine {
  return {
    id: 317,
    method_title: "Flat Rate",
    method_id: "flat_rate",
    total: "10.00",
    total_tax: "0.00",
    taxes: [],
    meta_data: [],
    ...overrides,
  };
}

/** A fee line (fields as `_orders.md` lists them); the docs' examples have none, so the values are ours. */
export function wooFeeLine(overrides: Partial<WooFeeLine> = {}): WooFeeLine {
  return {
    id: 320,
    name: "Gift wrap",
    tax_class: "",
    tax_status: "taxable",
    total: "5.00",
    total_tax: "0.00",
    taxes: [],
    meta_data: [],
    ...overrides,
  };
}

/**
 * Order 727 as the docs show it: processing, paid by bank transfer at
 * 2017-03-22T19:28:08 GMT; 6.00 + 0.45 + 12.00 + 0.90 + shipping 10.00 = 29.35.
 */
export function wooOrder(overrides: Partial<WooOrder> = {}): WooOrder {
  return {
    id: 727,
    parent_id: 0,
    number: "727",
    order_key: "wc_order_58d2d042d1d",
    created_via: "rest-api",
    version: "3.0.0",
    status: "processing",
    currency: "USD",
    date_created: "2017-03-22T16:28:02",
    date_created_gmt: "2017-03-22T19:28:02",
    date_modified: "2017-03-22T16:28:08",
    date_modified_gmt: "2017-03-22T19:28:08",
    discount_total: "0.00",
    discount_tax: "0.00",
    shipping_total: "10.00",
    shipping_tax: "0.00",
    cart_tax: "1.35",
    total: "29.35",
    total_tax: "1.35",
    prices_include_tax: false,
    customer_id: 0,
    customer_ip_address: "",
    customer_user_agent: "",
    customer_note: "",
    billing: {
      first_name: "John",
      last_name: "Doe",
      company: "",
      address_1: "969 Market",
      address_2: "",
      city: "San Francisco",
      state: "CA",
      postcode: "94103",
      country: "US",
      email: "john.doe@example.com",
      phone: "(555) 555-5555",
    },
    shipping: {
      first_name: "John",
      last_name: "Doe",
      company: "",
      address_1: "969 Market",
      address_2: "",
      city: "San Francisco",
      state: "CA",
      postcode: "94103",
      country: "US",
    },
    payment_method: "bacs",
    payment_method_title: "Direct Bank Transfer",
    transaction_id: "",
    date_paid: "2017-03-22T16:28:08",
    date_paid_gmt: "2017-03-22T19:28:08",
    date_completed: null,
    date_completed_gmt: null,
    cart_hash: "",
    meta_data: [{ id: 13106, key: "_download_permissions_granted", value: "yes" }],
    line_items: [wooLineItem(), wooVariationLine()],
    tax_lines: [
      {
        id: 318,
        rate_code: "US-CA-STATE TAX",
        rate_id: 75,
        label: "State Tax",
        compound: false,
        tax_total: "1.35",
        shipping_tax_total: "0.00",
        meta_data: [],
      },
    ],
    shipping_lines: [wooShippingLine()],
    fee_lines: [],
    coupon_lines: [],
    refunds: [],
    ...overrides,
  };
}

/** The body's bytes as WooCommerce sends them: `trim( wp_json_encode( $payload ) )` (PHP escapes "/" and non-ASCII). */
export function wooBody(payload: unknown): Buffer {
  const json = JSON.stringify(payload)
    .replaceAll("/", "\\/")
    .replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return Buffer.from(json.trim(), "utf8");
}

export interface WooHeaderOptions {
  secret?: string;
  topic?: string;
  webhookId?: number;
  /** New on every delivery (`wp_hash( webhook_id . strtotime('now') )`): random unless given. */
  deliveryId?: string;
  source?: string;
}

/** The headers of one delivery of `body` (`WC_Webhook::deliver`), signed with `secret`. */
export function wooHeaders(body: Buffer | string, options: WooHeaderOptions = {}): Record<string, string> {
  const topic = options.topic ?? "order.updated";
  const [resource = "", event = ""] = topic.split(".");
  return {
    "content-type": "application/json",
    "user-agent": "WooCommerce/9.8.5 Hookshot (WordPress/6.8.1)",
    "x-wc-webhook-source": options.source ?? "https://example.com/",
    "x-wc-webhook-topic": topic,
    "x-wc-webhook-resource": resource,
    "x-wc-webhook-event": event,
    "x-wc-webhook-signature": sign(body, options.secret ?? WOO_SECRET),
    "x-wc-webhook-id": String(options.webhookId ?? 142),
    "x-wc-webhook-delivery-id": options.deliveryId ?? randomBytes(16).toString("hex"),
  };
}

/** One signed delivery of `order`: the body and headers as they reach the gateway. */
export function wooDelivery(
  order: unknown = wooOrder(),
  options: WooHeaderOptions = {},
): { body: Buffer; headers: Record<string, string> } {
  const body = wooBody(order);
  return { body, headers: wooHeaders(body, options) };
}

/**
 * The ping WooCommerce sends when a webhook is created: unsigned, no X-WC-*
 * header, answered with exactly 200. The Content-Type WordPress adds to the
 * string body is not confirmed (docs/platform-webhooks.md Q5), so none is set.
 */
export function wooPing(webhookId = 142): { body: Buffer; headers: Record<string, string> } {
  return {
    body: Buffer.from(`webhook_id=${webhookId}`, "utf8"),
    headers: { "user-agent": "WooCommerce/9.8.5 Hookshot (WordPress/6.8.1)" },
  };
}
