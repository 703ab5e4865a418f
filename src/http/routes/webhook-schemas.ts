import { Type } from "typebox";
import type { Platform } from "../../sources/port.ts";
import { answers, EVERY_ROUTE, header, PATH_PARAMETER, success } from "../schemas/responses.ts";

/** The platforms' webhook routes as the document shows them; the handler is in webhooks.ts. */

const DESCRIPTIONS: Record<Platform, { summary: string; description: string }> = {
  shopify: {
    summary: "Shopify's orders/paid webhook",
    description:
      "Paste this URL into the Shopify webhook subscription for the topic `orders/paid` (format JSON). Verified by `X-Shopify-Hmac-Sha256`, the base64 HMAC-SHA256 of the raw body with the sender's secret; `X-Shopify-Topic`, `X-Shopify-Shop-Domain`, `X-Shopify-API-Version` and `X-Shopify-Webhook-Id` are required. One order per Shopify order: the key is the order's id, so retries and a second subscription create no second order. Answered within a second; a slow 1C answers 202.",
  },
  woocommerce: {
    summary: "WooCommerce's order webhook",
    description:
      "Paste this URL as the delivery URL of a WooCommerce webhook with the topic `Order updated` (or `Order created`). Verified by `X-WC-Webhook-Signature`, the base64 HMAC-SHA256 of the raw body with the webhook's secret; the unsigned creation ping (`webhook_id=N`) gets 200. An order counts as paid when it has `date_paid_gmt` and the status processing or completed; other updates are 200 and kept as ignored. The key is the order and its payment time: every update of one paid order is one order in 1C.",
  },
  tilda: {
    summary: "Tilda's webhook (order data after payment)",
    description:
      "Paste this URL, with the sender's secret as its last segment, into Tilda's Site settings → Forms → Webhook. Tilda signs nothing: the secret in the URL is the only check, so keep the URL secret. Form-encoded or JSON bodies; the test request `test=test` and every recorded delivery get 200 `ok`, the answer Tilda waits for. The key is the payment block's `orderid`.",
  },
};

const Params = (platform: Platform) =>
  Type.Object({
    sender: Type.String({ description: "The sender this platform's shop is configured as in SOURCES_FILE." }),
    ...(platform === "tilda"
      ? {
          token: Type.String({
            description: "The sender's Tilda secret (SOURCES_FILE `secrets`); logged as `<secret>`.",
          }),
        }
      : {}),
  });

const WebhookEvent = {
  type: "object",
  required: ["event_id", "status", "status_url"],
  properties: {
    event_id: { type: "string", description: "The event's key: `<platform>:<the platform's order key>`." },
    status: {
      type: "string",
      description: "The event's status in the register (PROCESSING, SUCCEEDED, FAILED_RETRYABLE, FAILED_FINAL).",
    },
    status_url: { type: "string" },
  },
} as const;

const KeptDelivery = {
  type: "object",
  required: ["status", "reason", "delivery_id"],
  properties: {
    status: { type: "string", enum: ["ignored", "unmapped"] },
    reason: { type: "string" },
    delivery_id: {
      type: "integer",
      description: "The kept delivery's id, for support (the console's platform deliveries).",
    },
  },
} as const;

/** WooCommerce's creation ping (webhook-answers.ts "ping"); Shopify sends none, Tilda's test request gets `ok`. */
const Ping = {
  type: "object",
  required: ["status"],
  properties: { status: { type: "string", const: "ok" } },
  additionalProperties: false,
} as const;

const EventOrKept = { oneOf: [WebhookEvent, KeptDelivery] };
const EventKeptOrPing = { oneOf: [WebhookEvent, KeptDelivery, Ping] };

/** Location is the event's: a kept delivery and the ping have none. */
const EVENT_LOCATION = { Location: header("Location", "The event's status URL; not on a kept delivery or the ping.") };

const PROBLEMS = [
  ...EVERY_ROUTE,
  ...PATH_PARAMETER,
  "GW_ERR_WEBHOOK_SIGNATURE",
  "GW_ERR_WEBHOOK_MALFORMED",
  "GW_ERR_BODY_TOO_LARGE",
  "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
  "GW_ERR_RATE_LIMITED",
  "GW_ERR_AUTH_THROTTLED",
  "GW_ERR_STORAGE_UNAVAILABLE",
] as const;

export function webhookRouteSchema(platform: Platform) {
  const plain = platform === "tilda";
  return {
    operationId: operationId("post", platform),
    tags: ["webhooks"],
    // Tilda's secret is the URL's last segment, which OpenAPI cannot name as a scheme: no scheme, described on the route.
    security:
      platform === "shopify" ? [{ shopifyHmac: [] }] : platform === "woocommerce" ? [{ woocommerceSignature: [] }] : [],
    summary: DESCRIPTIONS[platform].summary,
    description: DESCRIPTIONS[platform].description,
    params: Params(platform),
    response: answers(
      plain
        ? {
            200: success("Recorded (a payment, an ignored or an unmapped delivery) or the test request: `ok`.", {
              schema: { type: "string", const: "ok" },
              mediaType: "text/plain",
            }),
          }
        : {
            200:
              platform === "woocommerce"
                ? success(
                    'A repeat of a recorded payment, a payment 1C refused, a delivery that is not a payment (kept as ignored), or the unsigned creation ping (`{"status":"ok"}`).',
                    { schema: EventKeptOrPing },
                    EVENT_LOCATION,
                  )
                : success(
                    "A repeat of a recorded payment, a payment 1C refused, or a delivery that is not a payment (kept as ignored).",
                    { schema: EventOrKept },
                    EVENT_LOCATION,
                  ),
            201: success(
              "A new payment: 1C made the order within the wait.",
              { schema: WebhookEvent },
              { Location: header("Location") },
            ),
            202: success(
              "A new payment recorded, still in delivery to 1C; or a payment kept for support because it could not be mapped (unmapped).",
              { schema: EventOrKept },
              EVENT_LOCATION,
            ),
          },
      PROBLEMS,
    ),
  };
}

/**
 * The same URL under GET: a shop owner checking the pasted URL in a browser
 * learns that it exists and takes POST (RFC 9110 §15.5.6), where a 404 would
 * say it is wrong.
 */
export function webhookGetSchema(platform: Platform) {
  return {
    operationId: operationId("get", platform),
    tags: ["webhooks"],
    security: [],
    summary: `${DESCRIPTIONS[platform].summary}, opened in a browser`,
    description:
      "The URL takes only the platform's POST: a GET (or HEAD) is 405 `method-not-allowed` with `Allow: POST`, so a person who opens the pasted URL sees that it exists. Nothing is checked or recorded.",
    params: Params(platform),
    response: answers({}, [...EVERY_ROUTE, ...PATH_PARAMETER, "GW_ERR_METHOD_NOT_ALLOWED"]),
  };
}

/** `postShopifyWebhook`, `getTildaWebhook`: one operation per method and platform. */
function operationId(method: "get" | "post", platform: Platform): string {
  return `${method}${platform[0]?.toUpperCase()}${platform.slice(1)}Webhook`;
}
