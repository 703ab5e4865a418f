import type { ProblemKind } from "../../errors/catalogue.ts";
import { ALL_STATUSES } from "../../register/event-status.ts";
import { dateTime, type Hoisted } from "./component-schemas.ts";
import { schemaRef } from "./json.ts";
import type { HeaderObject, JsonObject, ParameterObject } from "./types.ts";

/** The components/headers and components/parameters. */

export const HEADERS: Record<string, HeaderObject> = {
  "X-Correlation-ID": {
    description:
      "On every answer: the sender's X-Correlation-ID if it was valid, else a UUID the gateway made. Quote it to support.",
    required: true,
    schema: { type: "string", maxLength: 128 },
    example: "shop-a-100234",
  },
  "Accept-Encoding": {
    description:
      "On a 415 for a body sent with a `Content-Encoding`: the codings the gateway reads, only `identity` (RFC 9110 §15.5.16).",
    schema: { type: "string", const: "identity" },
    example: "identity",
  },
  Location: {
    description: "The event's status URL.",
    schema: { type: "string", format: "uri-reference" },
    example: "/integration/v1/orders/paid/evt-7",
  },
  "Idempotent-Replayed": {
    description: "`false` on the answer that finished the event, `true` on every repeat of it.",
    schema: { type: "string", enum: ["true", "false"] },
  },
  "Retry-After": {
    description: "Seconds to wait before sending the same request again.",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "1",
  },
  "WWW-Authenticate": {
    description: "The bearer challenge of a 401.",
    schema: { type: "string" },
    example: 'Bearer realm="order-gateway"',
  },
  "X-RateLimit-Limit": {
    description:
      "Requests a sender may make per window. Sent on every answer of the senders' routes while rate limiting is on.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in this window.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "X-RateLimit-Reset": {
    description: "Seconds until the window resets.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
};

export function parameters(orderPaid: Hoisted, kinds: Record<string, ProblemKind>): Record<string, ParameterObject> {
  if (orderPaid.defs.EventId === undefined) throw new Error("the order-paid schema has no $defs/eventId");
  const sender: JsonObject = { type: "string", pattern: "^[A-Za-z0-9._-]{1,64}$" };
  return {
    EventId: {
      name: "event_id",
      in: "path",
      required: true,
      description: "The event's `event_id`, as the sender sent it.",
      schema: schemaRef("EventId"),
      example: "evt-7",
    },
    ProblemSlug: {
      name: "slug",
      in: "path",
      required: true,
      description: "The last segment of a problem `type`.",
      schema: { type: "string", enum: [...new Set(Object.values(kinds).map((kind) => kind.slug))] },
    },
    CorrelationId: {
      name: "X-Correlation-ID",
      in: "header",
      required: false,
      description:
        "1-128 of `A-Z a-z 0-9 . _ : @ / + = -`; anything else is replaced by a UUID. Echoed on every answer, logged, forwarded to 1C.",
      schema: { type: "string", pattern: "^[A-Za-z0-9._:@/+=-]{1,128}$" },
      example: "shop-a-100234",
    },
    IdempotencyKey: {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        'Optional (IETF draft), bare or quoted (`"evt-7"`); it must equal the body\'s `event_id` (400 otherwise).',
      schema: { type: "string" },
    },
    AdminSender: {
      name: "sender",
      in: "query",
      required: false,
      description:
        "The sender the event belongs to; needed only when several senders used this event_id (409 otherwise).",
      schema: sender,
    },
    ListStatus: {
      name: "status",
      in: "query",
      required: false,
      description: "Only events in this status.",
      schema: { type: "string", enum: [...ALL_STATUSES] },
    },
    ListSender: {
      name: "sender",
      in: "query",
      required: false,
      description: "Only this sender's events.",
      schema: sender,
    },
    ListSince: {
      name: "since",
      in: "query",
      required: false,
      description: "Received at or after (RFC 3339).",
      schema: dateTime,
    },
    ListUntil: {
      name: "until",
      in: "query",
      required: false,
      description: "Received at or before (RFC 3339).",
      schema: dateTime,
    },
    ListLimit: {
      name: "limit",
      in: "query",
      required: false,
      description: "Events in one page: 1-500, 50 if absent.",
      schema: { type: "string", pattern: "^(500|[1-4][0-9]{2}|[1-9][0-9]?)$" },
      example: "50",
    },
    ListCursor: {
      name: "cursor",
      in: "query",
      required: false,
      description: "`next_cursor` of the previous page; a cursor the gateway did not make is 400.",
      schema: { type: "string", maxLength: 400 },
    },
  };
}
