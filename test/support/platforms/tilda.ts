import type { WebhookDelivery } from "../../../src/sources/port.ts";

/**
 * Tilda's "Webhook" deliveries of an order after payment, built field by
 * field from docs/platform-webhooks.md §3 (the payment block's field names
 * come from third-party receivers' fixtures, quoted in §3.4; Tilda's own
 * pages do not list them).
 *
 * Tilda signs nothing. The sender's secret is the last path segment of the
 * URL the shop pastes into Tilda (`tildaWebhookPath`), so `sign` returns that
 * token, not an HMAC: it is here so that tests written for every platform
 * can call it alike.
 *
 * Self-contained on purpose (nothing from src/ but the delivery's type):
 * end-to-end tests import it to post the same bytes over HTTP.
 */

export const TILDA_SECRET = "tilda-url-token-3f9a1c7e5b2d";

/** Where the shop points Tilda: the route's sender and the secret as the last segment. */
export function tildaWebhookPath(sender: string, secret: string = TILDA_SECRET): string {
  return `/integration/v1/webhooks/tilda/${encodeURIComponent(sender)}/${encodeURIComponent(sign("", secret))}`;
}

/** Tilda's only proof of the sender: the secret itself, carried in the URL. The body plays no part. */
export function sign(_body: Buffer | string, secret: string): string {
  return secret;
}

/** A product of the payment block: an object, or Tilda's short form `"name=price"`. */
export interface TildaProduct {
  name?: string;
  quantity?: string | number;
  /** The line's total (price × quantity), before an order-level discount. */
  amount?: string | number;
  /** The unit price. */
  price?: string | number;
  sku?: string;
}

export interface TildaPayment {
  /** The payment system; `none` when the cart has none (then it is no payment). */
  sys?: string;
  /** The payment system's transaction id; `"0"` when there is none. */
  systranid?: string;
  /** Tilda's order number. */
  orderid?: string | number;
  products?: Array<TildaProduct | string>;
  /** The total paid: the products less the discount, plus delivery. */
  amount?: string | number;
  subtotal?: string | number;
  promocode?: string;
  discount?: string | number;
  delivery?: string;
  delivery_price?: string | number;
  delivery_fio?: string;
  delivery_address?: string;
  delivery_comment?: string;
}

/** The form's own fields around the payment block (a cart form, "Cart"). */
export type TildaFields = Record<string, string>;

export function cartFields(overrides: Overrides<TildaFields> = {}): TildaFields {
  return withOverrides(
    {
      Name: "Иван Петров",
      Email: "ivan.petrov@example.com",
      Phone: "+7 (916) 123-45-67",
      // The format of Tilda's integration doc example ("1111111:6161583731": project:lead).
      tranid: "4717921:2786412531",
      formid: "form42581206",
      formname: "Cart",
    },
    overrides,
  );
}

/**
 * A cart with no payment system connected, as both §3.4 examples that show
 * one: `sys` "none", `systranid` "0". Tilda sends it when the cart form is
 * submitted and no money has moved: it is no payment.
 */
export const NO_PAYMENT_SYSTEM = { sys: "none", systranid: "0" } as const satisfies TildaPayment;

/**
 * Paid online: §3.4's CloudPayments example's payment system and
 * transaction id. The fixtures quoted with `sys=none` carry these instead,
 * so that they are payments; pass `NO_PAYMENT_SYSTEM` for the cart as quoted.
 */
export const PAID_ONLINE = { sys: "cloudpayments", systranid: "3521002298" } as const satisfies TildaPayment;

/**
 * §3.4 shape 1 (nested form fields): the Minipresso cart,
 * `payment[amount]=24450`, paid online (`PAID_ONLINE`; the fixture quoted
 * has `sys=none`, `systranid=0`: `NO_PAYMENT_SYSTEM`). The fixture quoted
 * elides the products after the first; the two added here make the
 * products add up to the amount: 4500 + 2 × 5990 + 7970 = 24450.
 */
export function minipressoPayment(overrides: Overrides<TildaPayment> = {}): TildaPayment {
  return withOverrides(
    {
      ...PAID_ONLINE,
      orderid: "1557604691",
      products: [
        { name: "Minipresso GR", quantity: "1", amount: "4500", price: "4500", sku: "WAC-MP-GR" },
        { name: "Minipresso NS", quantity: "2", amount: "11980", price: "5990", sku: "WAC-MP-NS" },
        // No SKU set on this product in the shop: only its name identifies it.
        { name: "Nanopresso Barista Kit", quantity: "1", amount: "7970", price: "7970" },
      ],
      amount: "24450",
    },
    overrides,
  );
}

/**
 * §3.4 shape 2's second example (cloudpayments, promocode TEST, discount
 * 485.1, amount 4.9). Its products are elided in the quote; these two cost
 * 299.70 + 190.30 = 490.00, which less 485.10 is the 4.90 paid.
 */
export function cloudpaymentsPayment(overrides: Overrides<TildaPayment> = {}): TildaPayment {
  return withOverrides(
    {
      sys: "cloudpayments",
      systranid: "3521002298",
      orderid: "1869817991",
      products: [
        { name: "Футболка оверсайз", quantity: "3", amount: "299.7", price: "99.9", sku: "TS-OVR-BLK" },
        { name: "Кружка эмалированная", quantity: "1", amount: "190.3", price: "190.3", sku: "MUG-ENM-350" },
      ],
      promocode: "TEST",
      discount: "485.1",
      amount: "4.9",
    },
    overrides,
  );
}

/**
 * §3.4 shape 2's first example: products as `"name=price"` strings, paid
 * online (`PAID_ONLINE`; the example quoted has `sys=none`: `NO_PAYMENT_SYSTEM`).
 */
export function shoesPayment(overrides: Overrides<TildaPayment> = {}): TildaPayment {
  return withOverrides(
    {
      ...PAID_ONLINE,
      orderid: "1132944846",
      products: ["Полуботинки женские (дм марсала, Размер: 36)=1399"],
      amount: "1399",
    },
    overrides,
  );
}

/** Shape 1: the payment block as nested form fields, `payment[products][0][name]=…`, brackets unescaped as in the fixture. */
export function nestedForm(payment: TildaPayment, fields: TildaFields = cartFields()): string {
  const pairs: Array<[string, string]> = [];
  flatten("payment", payment, pairs);
  for (const [name, value] of Object.entries(fields)) pairs.push([name, value]);
  return encodeForm(pairs);
}

/** Shape 2: the payment block as one form field holding JSON. */
export function jsonStringForm(payment: TildaPayment, fields: TildaFields = cartFields()): string {
  return encodeForm([...Object.entries(fields), ["payment", JSON.stringify(payment)]]);
}

/** Tilda's JSON option: the form's fields and the payment block in one JSON object. */
export function jsonBody(payment: TildaPayment, fields: TildaFields = cartFields()): string {
  return JSON.stringify({ ...fields, payment });
}

/** What Tilda posts once when the webhook is connected, expecting 200. */
export const TEST_REQUEST = "test=test";

export function formHeaders(): Record<string, string> {
  return { "content-type": "application/x-www-form-urlencoded" };
}

export function jsonHeaders(): Record<string, string> {
  return { "content-type": "application/json" };
}

/** A delivery as the edge hands it to the adapter: the bytes, the URL's token, the time it came. */
export function tildaDelivery(
  body: Buffer | string,
  options: { headers?: Record<string, string>; token?: string | undefined; receivedAt?: number } = {},
): WebhookDelivery {
  return {
    headers: options.headers ?? formHeaders(),
    raw: Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8"),
    urlToken: "token" in options ? options.token : sign(body, TILDA_SECRET),
    receivedAt: options.receivedAt ?? Date.parse("2025-03-14T09:26:53.000Z"),
  };
}

/** `+` for a space and brackets left bare, as the fixture in §3.4 shows them. */
function encodeForm(pairs: ReadonlyArray<readonly [string, string]>): string {
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, "+");
  return pairs
    .map(([name, value]) => `${encode(name).replace(/%5B/g, "[").replace(/%5D/g, "]")}=${encode(value)}`)
    .join("&");
}

function flatten(name: string, value: unknown, pairs: Array<[string, string]>): void {
  if (value === undefined) return;
  if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) flatten(`${name}[${key}]`, child, pairs);
    return;
  }
  pairs.push([name, String(value)]);
}

/** An override of `undefined` removes the field: a delivery without it. */
export type Overrides<T> = { [K in keyof T]?: T[K] | undefined };

function withOverrides<T extends object>(base: T, overrides: Overrides<T>): T {
  return Object.fromEntries(Object.entries({ ...base, ...overrides }).filter(([, value]) => value !== undefined)) as T;
}
