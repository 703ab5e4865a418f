import type { IncomingHttpHeaders } from "node:http";
import { header, quoted } from "./mapping.ts";
import { paymentReading } from "./payment-reading.ts";
import { readPlatformJson } from "./platform-json.ts";
import type { PlatformIds, Reading, SourceAdapter, SourceSettings, Verified, WebhookDelivery } from "./port.ts";
import { type Json, objectOf, shopifyId, shopifyOrderEvent, textOf } from "./shopify-order.ts";
import { isHmacSha256Base64 } from "./signature.ts";

/**
 * Shopify's `orders/paid` webhook (docs/platform-webhooks.md §1): signed with
 * the app's client secret over the raw body, retried 8 times over 4 hours
 * with the original payload, given up on after 5 seconds.
 */

const HMAC = "x-shopify-hmac-sha256";

/**
 * The headers Shopify's own library refuses a delivery without
 * (shopify-api `checkWebhooksHeaders`: hmac, topic, domain, apiVersion, webhookId).
 */
const REQUIRED = [
  ["x-shopify-hmac-sha256", "X-Shopify-Hmac-Sha256"],
  ["x-shopify-topic", "X-Shopify-Topic"],
  ["x-shopify-shop-domain", "X-Shopify-Shop-Domain"],
  ["x-shopify-api-version", "X-Shopify-API-Version"],
  ["x-shopify-webhook-id", "X-Shopify-Webhook-Id"],
] as const;

/** Kept for support under these names; none of them goes into the event (a retry or a second subscription changes some). */
const RECORDED = [
  ["x-shopify-webhook-id", "webhook_id"],
  ["x-shopify-event-id", "event_id"],
  ["x-shopify-topic", "topic"],
  ["x-shopify-shop-domain", "shop_domain"],
  ["x-shopify-api-version", "api_version"],
  ["x-shopify-triggered-at", "triggered_at"],
] as const;

const PAID_TOPIC = "orders/paid";

function verify(delivery: WebhookDelivery, settings: SourceSettings): Verified {
  const { headers } = delivery;
  for (const [name, display] of REQUIRED) {
    const value = headers[name];
    if (Array.isArray(value)) return { ok: false, detail: `${display} is repeated` };
    if (value === undefined || value.trim() === "") return { ok: false, detail: `${display} is missing` };
  }
  if (!isHmacSha256Base64(delivery.raw, headers[HMAC], settings.secrets)) {
    return { ok: false, detail: "X-Shopify-Hmac-Sha256 is not the HMAC-SHA256 of the body under the sender's secret" };
  }
  // The headers are not signed and one app secret signs for every shop that installed the app:
  // only the configured shop's deliveries are this sender's.
  const shop = (header(headers, "x-shopify-shop-domain") as string).trim();
  if (settings.shopDomain !== undefined && shop.toLowerCase() !== settings.shopDomain.trim().toLowerCase()) {
    return { ok: false, detail: `X-Shopify-Shop-Domain "${shop.slice(0, 255)}" is not this sender's shop` };
  }
  return { ok: true, digest: (headers[HMAC] as string).trim() };
}

function idsOf(headers: IncomingHttpHeaders, order: Json | undefined, orderId: string | undefined): PlatformIds {
  const ids: Record<string, string> = {};
  for (const [name, key] of RECORDED) {
    const value = header(headers, name)?.trim();
    if (value !== undefined && value !== "") ids[key] = value;
  }
  if (orderId !== undefined) ids.order_id = orderId;
  const name = textOf(order?.name);
  if (name !== undefined) ids.order_name = name;
  return ids;
}

/** Why an authentic `orders/paid` delivery is not a payment we book; undefined when it is one. */
function notPaidReason(order: Json, settings: SourceSettings): string | undefined {
  if (order.financial_status !== "paid") {
    return `financial_status is ${quoted(order.financial_status ?? null)}, not "paid"`;
  }
  if (order.cancelled_at !== undefined && order.cancelled_at !== null) {
    return `cancelled_at is ${quoted(order.cancelled_at)}: the order was cancelled`;
  }
  if (order.test === true && settings.acceptTestOrders !== true) {
    return "test is true: a test order, and the sender does not accept test orders";
  }
  return undefined;
}

function read(delivery: WebhookDelivery, settings: SourceSettings): Reading {
  const body = readPlatformJson(delivery.raw);
  if (!body.ok) return { kind: "malformed", detail: body.detail };
  const order = objectOf(body.value);
  if (order === undefined) return { kind: "malformed", detail: "the body is not a JSON object (a Shopify order)" };
  const orderId = shopifyId(order, "Order");
  const ids = idsOf(delivery.headers, order, orderId);
  const key = orderId === undefined ? null : `shopify:${orderId}`;
  // Before the order id: another topic's body need not be an order, and an authentic delivery of it is no 400.
  const topic = header(delivery.headers, "x-shopify-topic")?.trim();
  if (topic !== PAID_TOPIC) {
    return {
      kind: "ignored",
      key,
      reason: `X-Shopify-Topic is ${quoted(topic ?? null)}, not "orders/paid"`,
      ids,
    };
  }
  if (key === null || orderId === undefined) {
    return {
      kind: "malformed",
      detail: "the order has no usable id: neither admin_graphql_api_id (gid://shopify/Order/…) nor a safe integer id",
    };
  }
  const notPaid = notPaidReason(order, settings);
  if (notPaid !== undefined) return { kind: "ignored", key, reason: notPaid, ids };
  return paymentReading(key, ids, () => shopifyOrderEvent(order, orderId, key, settings));
}

export const shopifyAdapter: SourceAdapter = {
  platform: "shopify",
  answerStyle: "json",
  answerWithinMs: 5000,
  readsHeaders: ["x-shopify-topic"],
  verify,
  read,
};
