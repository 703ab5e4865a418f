import { Type } from "typebox";
import { EventStatus } from "../../domain/event-status.ts";
import type { ProblemCode } from "../../errors/catalogue.ts";
import { type Action, rolesAllowed } from "../../operations/authorization.ts";
import { REMAP_ACTION } from "../../operations/remap-delivery.ts";
import { REPLAY_REASON_MAX } from "../../operations/replay-event.ts";
import type { SourceDelivery, SourceOutcome } from "../../register/source-port.ts";
import { PLATFORMS, type Platform } from "../../sources/port.ts";
import type { JsonObject } from "../openapi/types.ts";
import { ADMIN_GATE, answers, EVERY_ROUTE, header, JSON_BODY, PATH_PARAMETER, success } from "../schemas/responses.ts";
import { securityFor, senderId, whoMay } from "./admin-schemas.ts";
import { deliveryDetailView, deliveryView, remappedView } from "./admin-webhook-views.ts";
import { CorrelationHeaders } from "./order-paid-schemas.ts";

/**
 * The platform deliveries' admin routes as Fastify validates them and the
 * document shows them; the handlers are in admin-webhooks.ts.
 */

export const DELIVERY_ACTIONS = {
  listDeliveries: "events.read",
  getDelivery: "events.read",
  remapDelivery: REMAP_ACTION,
} as const satisfies Record<string, Action>;

export const OUTCOMES: readonly SourceOutcome[] = ["accepted", "ignored", "unmapped"];

/** Deliveries in one page when `limit` is absent; 500 at most. */
export const DEFAULT_DELIVERY_LIMIT = 50;

/** Keyset paging by id: the ids the register hands out, never 0. */
const DELIVERY_ID_PATTERN = "^[1-9][0-9]{0,14}$";

export const DeliveryListQuery = Type.Object(
  {
    sender: Type.Optional(Type.String({ ...senderId, description: "Only this sender's deliveries." })),
    platform: Type.Optional(
      Type.Unsafe<Platform>({ type: "string", enum: [...PLATFORMS], description: "Only this platform's deliveries." }),
    ),
    outcome: Type.Optional(
      Type.Unsafe<SourceOutcome>({
        type: "string",
        enum: [...OUTCOMES],
        description:
          "Only deliveries with this outcome: `accepted` (became an event), `ignored` (not a payment, or a repeat with other content), `unmapped` (a payment that could not be mapped; kept until support maps it again).",
      }),
    ),
    before_id: Type.Optional(
      Type.String({
        pattern: DELIVERY_ID_PATTERN,
        description: "Only deliveries with a smaller id: `next_before_id` of the previous page.",
      }),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: "^(500|[1-4][0-9]{2}|[1-9][0-9]?)$",
        description: `Deliveries in one page: 1-500, ${DEFAULT_DELIVERY_LIMIT} if absent.`,
        examples: ["50"],
      }),
    ),
  },
  { additionalProperties: false },
);

/** No constraint beyond "a string": an id that cannot exist is 404, like one purged. */
export const DeliveryIdParams = Type.Object({
  id: Type.String({
    description: "The delivery's `id` (the list's, or `delivery_id` of the platform's answer).",
    examples: ["42"],
  }),
});

export const RemapBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: REPLAY_REASON_MAX, pattern: "\\S" }) },
  {
    additionalProperties: false,
    description: "Why: what was fixed in SOURCES_FILE. Who asks is the bearer token's owner.",
    examples: [{ reason: "SKU TEA-OOLONG mapped to TEA-001 in SOURCES_FILE" }],
  },
);

const nullable = (type: string, description: string): JsonObject => ({ type: [type, "null"], description });

const DELIVERY_PROPERTIES: Record<string, JsonObject> = {
  id: { type: "integer", description: "The delivery's id: newer deliveries have larger ids." },
  sender: { type: "string", description: "The sender the platform's shop is configured as (SOURCES_FILE)." },
  platform: { type: "string", enum: [...PLATFORMS] },
  key: {
    type: "string",
    description: "The platform's stable key for the order's payment: the event_id once it maps; empty when none.",
  },
  outcome: { type: "string", enum: [...OUTCOMES] },
  reason: nullable("string", "Why it was ignored or left unmapped; null when accepted."),
  event_id: nullable(
    "string",
    "The event it became: an accepted delivery's, or an unmapped one's once mapped again; null otherwise.",
  ),
  ids: {
    type: "object",
    additionalProperties: { type: "string" },
    description: "The platform's own ids of the delivery (webhook id, topic, shop domain, delivery id…).",
  },
  content_type: nullable("string", "The Content-Type it came with."),
  correlation_id: { type: "string", description: "The correlation id of the request that brought it." },
  received_at: { type: "string", format: "date-time" },
  remapped_at: nullable("string", "When support mapped it again; null otherwise."),
  remapped_by: nullable(
    "string",
    "Who mapped it again (the token's owner); null otherwise, and for one remapped before 2026-12-05.",
  ),
  remap_reason: nullable("string", "Why, as they said; null when remapped_by is."),
};

const DeliverySchema: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: Object.keys(DELIVERY_PROPERTIES),
  properties: DELIVERY_PROPERTIES,
};

const DeliveryListSchema: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: ["deliveries", "next_before_id"],
  properties: {
    deliveries: { type: "array", items: DeliverySchema },
    next_before_id: nullable("integer", "Pass it as `before_id` for the next (older) page; null on the last page."),
  },
};

const DeliveryDetailSchema: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: [...Object.keys(DELIVERY_PROPERTIES), "payload", "payload_masked"],
  properties: {
    ...DELIVERY_PROPERTIES,
    payload: {
      type: "string",
      description:
        "The body as received (UTF-8 text); for a role that does not read personal data, written again with e-mail addresses and phone numbers masked.",
    },
    payload_masked: {
      type: "boolean",
      description: "Whether `payload` has e-mail addresses and phone numbers masked.",
    },
  },
};

const RemappedSchema: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: ["delivery_id", "sender", "event_id", "status", "status_url"],
  properties: {
    delivery_id: { type: "integer" },
    sender: { type: "string" },
    event_id: { type: "string" },
    status: {
      type: "string",
      description: "The event's status in the register (PROCESSING, SUCCEEDED, FAILED_RETRYABLE, FAILED_FINAL).",
    },
    status_url: { type: "string", description: "The event's status URL (the sender's token reads it)." },
  },
};

/** An unmapped Shopify order, as support finds it. */
const EXAMPLE_DELIVERY: SourceDelivery = {
  id: 42,
  sender: "shop-a",
  platform: "shopify",
  key: "shopify:820982911946154508",
  outcome: "unmapped",
  reason: 'unknown SKU "TEA-OOLONG": not in the sender\'s SKU map',
  eventId: null,
  ids: JSON.stringify({
    ids: {
      webhook_id: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
      topic: "orders/paid",
      shop_domain: "shop-a.myshopify.com",
    },
    headers: { "content-type": "application/json", "x-shopify-topic": "orders/paid" },
  }),
  payload: '{"id":820982911946154508,"email":"jon@example.com","line_items":[{"sku":"TEA-OOLONG","quantity":2}]}',
  contentType: "application/json",
  correlationId: "9b2f6c1e-1f0a-4b8e-9a63-5d1c7f0e2a10",
  receivedAt: Date.UTC(2026, 2, 1, 7, 0, 1),
  remappedAt: null,
  remappedBy: null,
  remapReason: null,
};

const EXAMPLE_RECORD_VIEW = remappedView(EXAMPLE_DELIVERY, {
  sender: EXAMPLE_DELIVERY.sender,
  eventId: EXAMPLE_DELIVERY.key,
  status: EventStatus.PROCESSING,
} as Parameters<typeof remappedView>[1]);

const READ = [...EVERY_ROUTE, ...ADMIN_GATE, "GW_ERR_STORAGE_UNAVAILABLE"] as const satisfies readonly ProblemCode[];

export const listDeliveriesSchema = {
  operationId: "listWebhookDeliveries",
  tags: ["admin"],
  security: securityFor(DELIVERY_ACTIONS.listDeliveries),
  summary: "List platform deliveries",
  description: `The platforms' webhook deliveries (Shopify, WooCommerce, Tilda) the gateway kept, newest first, a page at a time: pass \`next_before_id\` as \`before_id\` until it is null. Only the first delivery of an accepted payment is kept; ignored ones (not a payment) and unmapped ones (a payment that could not be mapped) are kept for support. The payloads are not listed: \`GET …/webhook-deliveries/{id}\` has one. An unknown or malformed query parameter is 400 \`bad-request\`.${whoMay(DELIVERY_ACTIONS.listDeliveries)}`,
  querystring: DeliveryListQuery,
  response: answers(
    {
      200: success("A page of deliveries.", {
        schema: DeliveryListSchema,
        examples: { page: { value: { deliveries: [deliveryView(EXAMPLE_DELIVERY)], next_before_id: null } } },
      }),
    },
    READ,
  ),
};

export const getDeliverySchema = {
  operationId: "getWebhookDelivery",
  tags: ["admin"],
  security: securityFor(DELIVERY_ACTIONS.getDelivery),
  summary: "One platform delivery, with its payload",
  description: `One delivery with the payload as the platform sent it. E-mail addresses and phone numbers in it are masked unless the role is ${rolesAllowed("personal-data.read").join(" or ")}. An id that does not exist (or was purged) is 404 \`not-found\`.${whoMay(DELIVERY_ACTIONS.getDelivery)}`,
  params: DeliveryIdParams,
  response: answers(
    {
      200: success("The delivery.", {
        schema: DeliveryDetailSchema,
        examples: {
          delivery: {
            value: deliveryDetailView({
              delivery: EXAMPLE_DELIVERY,
              ids: {},
              payload: EXAMPLE_DELIVERY.payload,
              masked: false,
            }),
          },
        },
      }),
    },
    [...READ, ...PATH_PARAMETER, "GW_ERR_NOT_FOUND"],
  ),
};

export const remapDeliverySchema = {
  operationId: "remapWebhookDelivery",
  tags: ["admin"],
  security: securityFor(DELIVERY_ACTIONS.remapDelivery),
  summary: "Map an unmapped platform delivery again",
  description: `After support fixed the sender's settings in SOURCES_FILE (a SKU map, a currency) and restarted the gateway, reads an unmapped delivery's stored payload again with the settings as they are now. If it maps, the order is recorded as an event under the platform's key and goes to 1C like any other (202, with its status URL); the delivery then points at the event and cannot be mapped again. If it still does not map: 422 \`still-unmapped\` with the reason, and nothing changes. A delivery that is not unmapped, was mapped already, or whose platform is no longer configured for its sender: 409 \`remap-refused\`. The request's log line names the token's owner; the reason is logged with it.${whoMay(DELIVERY_ACTIONS.remapDelivery)}`,
  params: DeliveryIdParams,
  headers: CorrelationHeaders,
  body: RemapBody,
  response: answers(
    {
      202: success(
        "Mapped: recorded as an event, on its way to 1C.",
        { schema: RemappedSchema, examples: { mapped: { value: EXAMPLE_RECORD_VIEW } } },
        { Location: header("Location") },
      ),
    },
    [...READ, ...PATH_PARAMETER, ...JSON_BODY, "GW_ERR_NOT_FOUND", "GW_ERR_REMAP_REFUSED", "GW_ERR_STILL_UNMAPPED"],
  ),
};
