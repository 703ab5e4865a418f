import type { IncomingHttpHeaders } from "node:http";
import { header, MappingError, quoted } from "./mapping.ts";
import { paymentReading } from "./payment-reading.ts";
import { readPlatformJson } from "./platform-json.ts";
import type { PlatformIds, Reading, SourceAdapter, SourceSettings, Verified, WebhookDelivery } from "./port.ts";
import { isHmacSha256Base64 } from "./signature.ts";
import { isRecord, paidInstant, type WooRecord, wooOrderEvent } from "./woocommerce-order.ts";

/**
 * WooCommerce's order webhooks (`order.updated`, `order.created`): see
 * docs/platform-webhooks.md §2. WooCommerce never retries a failed delivery,
 * and builds each payload when it sends it, so one payment can arrive many
 * times as different deliveries of the same order (a new delivery id each
 * time, the status moving from processing to completed). The key is
 * therefore the order and its payment instant, never the delivery.
 */
export const woocommerceAdapter: SourceAdapter = {
  platform: "woocommerce",
  answerStyle: "json",
  // WooCommerce's HTTP client timeout (MINUTE_IN_SECONDS).
  answerWithinMs: 60_000,
  resendsPaidOrders: true,
  readsHeaders: ["x-wc-webhook-topic", "x-wc-webhook-resource"],
  isPing,
  verify,
  read,
};

const SIGNATURE = "x-wc-webhook-signature";

/** The creation ping (`WC_Webhook::deliver_ping`): the form body `webhook_id=N`, sent without any X-WC-* header. */
function isPing(delivery: WebhookDelivery): boolean {
  return (
    delivery.headers[SIGNATURE] === undefined &&
    delivery.raw.length <= 32 &&
    PING_BODY.test(delivery.raw.toString("latin1"))
  );
}

const PING_BODY = /^webhook_id=[0-9]{1,20}$/;

function verify(delivery: WebhookDelivery, settings: SourceSettings): Verified {
  const signature = delivery.headers[SIGNATURE];
  if (signature === undefined) return { ok: false, detail: "X-WC-Webhook-Signature is missing" };
  if (typeof signature !== "string") return { ok: false, detail: "X-WC-Webhook-Signature is repeated" };
  if (!isHmacSha256Base64(delivery.raw, signature, settings.secrets)) {
    return {
      ok: false,
      detail: "X-WC-Webhook-Signature is not the base64 HMAC-SHA256 of the body under the webhook's secret",
    };
  }
  return { ok: true, digest: signature.trim() };
}

function read(delivery: WebhookDelivery, settings: SourceSettings): Reading {
  const body = readPlatformJson(delivery.raw);
  if (!body.ok) return { kind: "malformed", detail: body.detail };
  const order = body.value;
  if (!isRecord(order)) return { kind: "malformed", detail: "the body is not a JSON object" };
  const deliveryIds = headerIds(delivery.headers);
  const notOrder = notAnOrderWebhook(delivery.headers);
  // Another resource's id (a product's) would make an order key that is not one.
  if (notOrder !== undefined) return { kind: "ignored", key: null, reason: notOrder, ids: deliveryIds };
  if (!Number.isSafeInteger(order.id) || (order.id as number) < 1) {
    return { kind: "malformed", detail: `the order has no integer id (id is ${quoted(order.id)})` };
  }
  const ids = { ...deliveryIds, ...orderIds(order) };
  const orderKey = `woocommerce:${order.id}`;
  const deleted = header(delivery.headers, "x-wc-webhook-topic") === "order.deleted";
  if (deleted) return { kind: "ignored", key: orderKey, reason: "topic is order.deleted: the order was deleted", ids };
  const unpaid = notPaidReason(order);
  if (unpaid !== undefined) return { kind: "ignored", key: orderKey, reason: unpaid, ids };
  let paidAt: string;
  try {
    paidAt = paidInstant(order);
  } catch (error) {
    if (error instanceof MappingError) return { kind: "unmapped", key: orderKey, reason: error.message, ids };
    throw error;
  }
  // One payment, one key: date_paid_gmt stays when the order moves on to completed.
  const key = `${orderKey}:${paidAt.replace(/[^0-9]/g, "")}`;
  return paymentReading(key, ids, () => wooOrderEvent(order, key, settings));
}

/** Why a signed delivery is not an order webhook (a product's, an action's), or undefined when it is one. */
function notAnOrderWebhook(headers: IncomingHttpHeaders): string | undefined {
  const topic = header(headers, "x-wc-webhook-topic");
  const resource = header(headers, "x-wc-webhook-resource");
  if (topic === undefined && resource === undefined) {
    return "no X-WC-Webhook-Topic or X-WC-Webhook-Resource header: not an order webhook";
  }
  if (topic?.startsWith("action.") || resource === "action") {
    return `topic ${quoted(topic ?? "action")} is an action hook, not an order webhook`;
  }
  if (resource !== undefined && resource !== "order") {
    return `X-WC-Webhook-Resource is ${quoted(resource)}, not "order"`;
  }
  if (topic !== undefined && !topic.startsWith("order.")) return `topic ${quoted(topic)} is not an order topic`;
  return undefined;
}

const PAID_STATUSES: ReadonlySet<unknown> = new Set(["processing", "completed"]);

/**
 * Paid means a payment date AND a paid status: `completed` alone is not
 * enough (a bank transfer marked completed by hand has no date_paid), and a
 * date alone is not either (a refunded order keeps its date_paid).
 */
function notPaidReason(order: WooRecord): string | undefined {
  const paidStatus = PAID_STATUSES.has(order.status);
  const hasPaidDate = order.date_paid_gmt !== undefined && order.date_paid_gmt !== null && order.date_paid_gmt !== "";
  if (paidStatus && hasPaidDate) return undefined;
  const status = `status is ${order.status === undefined ? "missing" : quoted(order.status)}`;
  const date = `date_paid_gmt is ${order.date_paid_gmt === undefined ? "missing" : quoted(order.date_paid_gmt)}`;
  if (!paidStatus && !hasPaidDate) return `${status}, not "processing" or "completed", and ${date}`;
  if (!paidStatus) return `${status}, not "processing" or "completed"`;
  return `${status}, but ${date}: the order has no payment date`;
}

function headerIds(headers: IncomingHttpHeaders): PlatformIds {
  const ids: Record<string, string> = {};
  for (const [id, name] of HEADER_IDS) {
    const value = header(headers, name);
    if (value !== undefined && value !== "") ids[id] = value;
  }
  return ids;
}

const HEADER_IDS = [
  ["webhook_id", "x-wc-webhook-id"],
  ["delivery_id", "x-wc-webhook-delivery-id"],
  ["topic", "x-wc-webhook-topic"],
  ["source", "x-wc-webhook-source"],
] as const;

function orderIds(order: WooRecord): PlatformIds {
  const ids: Record<string, string> = { order_id: String(order.id) };
  if (typeof order.number === "string" || typeof order.number === "number") ids.order_number = String(order.number);
  if (typeof order.status === "string") ids.status = order.status;
  return ids;
}

/** The gateway's own refusal of the mapped event, in one line for support. */
