import { Type } from "typebox";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import { type Action, rolesAllowed } from "../../operations/authorization.ts";
import { REPLAY_REASON_MAX, REQUESTED_BY_MAX } from "../../operations/replay-event.ts";
import { EXAMPLES } from "../schemas/examples.ts";
import { ADMIN_GATE, answers, EVERY_ROUTE, header, JSON_BODY, PATH_PARAMETER, success } from "../schemas/responses.ts";
import { CorrelationHeaders, EventIdParams } from "./order-paid-schemas.ts";

/**
 * The admin routes' schemas: Fastify validates the query strings and the
 * replay body with them (strict Ajv, no coercion), the handlers get their
 * types from them, and the document shows them.
 */

/** What each admin route does: its guard (admin.ts) and its documented security both come from here. */
export const ADMIN_ACTIONS = {
  listEvents: "events.read",
  getEvent: "events.read",
  replayEvent: "events.replay",
} as const satisfies Record<string, Action>;

/**
 * A route's security requirement, made from the authorization policy so the
 * document cannot drift from it: OpenAPI 3.1 lets a bearer requirement list
 * the roles it needs, and these are the roles that may call the route.
 */
export function securityFor(action: Action) {
  return [{ adminBearer: rolesAllowed(action) }];
}

/** What the route's description says about who may call it. */
export function whoMay(action: Action): string {
  return ` Roles: ${rolesAllowed(action).join(", ")} (a bearer token from OPERATORS_FILE, or ADMIN_TOKEN as admin); no token 401 \`unauthorized\`, a token that is nobody's (a sender's included) 403 \`forbidden\`, a role without this right 403 \`forbidden\`.`;
}

export const senderId = { pattern: "^[A-Za-z0-9._-]{1,64}$" };

export const SenderQuery = Type.Object(
  {
    sender: Type.Optional(
      Type.String({
        ...senderId,
        description:
          "The sender the event belongs to; needed only when several senders used this event_id (409 otherwise).",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object(
  {
    // The old schema's exact shape, so Ajv's messages stay the same; Unsafe gives it its type.
    status: Type.Optional(
      Type.Unsafe<EventStatus>({ type: "string", enum: [...ALL_STATUSES], description: "Only events in this status." }),
    ),
    sender: Type.Optional(Type.String({ ...senderId, description: "Only this sender's events." })),
    since: Type.Optional(Type.String({ format: "date-time", description: "Received at or after (RFC 3339)." })),
    until: Type.Optional(Type.String({ format: "date-time", description: "Received at or before (RFC 3339)." })),
    // Query strings are text and Ajv coerces nothing here: the handler parses the number.
    limit: Type.Optional(
      Type.String({
        pattern: "^(500|[1-4][0-9]{2}|[1-9][0-9]?)$",
        description: "Events in one page: 1-500, 50 if absent.",
        examples: ["50"],
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        maxLength: 400,
        description: "`next_cursor` of the previous page; a cursor the gateway did not make is 400.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReplayBody = Type.Object(
  {
    // At least one character that is not a space: the audit trail's "why" is never blank, as the console and the CLI require.
    reason: Type.String({ minLength: 1, maxLength: REPLAY_REASON_MAX, pattern: "\\S" }),
    force: Type.Optional(Type.Boolean()),
    requested_by: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: REQUESTED_BY_MAX,
        deprecated: true,
        description:
          "Ignored: the replay is recorded under the name the bearer token belongs to (OPERATORS_FILE's `name`, or `admin` for ADMIN_TOKEN). Accepted so that older scripts keep working.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "Why. Who asks is the bearer token's owner.",
    examples: [{ reason: "article MUG-010 added in 1C", force: false }],
  },
);

const LOOK_UP = [
  ...EVERY_ROUTE,
  ...PATH_PARAMETER,
  ...ADMIN_GATE,
  "GW_ERR_NOT_FOUND",
  "GW_ERR_AMBIGUOUS_EVENT",
] as const;

export const listEventsSchema = {
  operationId: "listEvents",
  tags: ["admin"],
  security: securityFor(ADMIN_ACTIONS.listEvents),
  summary: "List events",
  description: `Events across senders, newest received first, a page at a time: pass \`next_cursor\` as \`cursor\` until it is null. An unknown or malformed query parameter is 400 \`bad-request\`.${whoMay(ADMIN_ACTIONS.listEvents)}`,
  querystring: ListQuery,
  response: answers(
    {
      200: success("A page of events.", {
        schema: "AdminEventList",
        examples: { page: { value: { events: [EXAMPLES.adminEvent], next_cursor: null } } },
      }),
    },
    [...EVERY_ROUTE, ...ADMIN_GATE, "GW_ERR_STORAGE_UNAVAILABLE"],
  ),
};

export const getEventSchema = {
  operationId: "getEvent",
  tags: ["admin"],
  security: securityFor(ADMIN_ACTIONS.getEvent),
  summary: "One event, any sender",
  description: `Everything about one event: its status, sender, body, recorded answer, attempts and replays. Support staff know an event by its id alone; when several senders used it, the answer is 409 \`ambiguous-event-id\` and \`sender\` picks one. This is the status URL for 1C administrators: a viewer polls it for any sender's event. The body's e-mail addresses and phone numbers are masked unless the role is ${rolesAllowed("personal-data.read").join(" or ")}, and so are the e-mail addresses quoted in 1C's texts (\`error\`, \`response\`, the attempts' \`detail\`).${whoMay(ADMIN_ACTIONS.getEvent)}`,
  params: EventIdParams,
  querystring: SenderQuery,
  response: answers(
    {
      200: success("The event.", { schema: "AdminEventDetail", examples: { event: { value: EXAMPLES.adminDetail } } }),
    },
    [...LOOK_UP, "GW_ERR_STORAGE_UNAVAILABLE"],
  ),
};

export const replayEventSchema = {
  operationId: "replayEvent",
  tags: ["admin"],
  security: securityFor(ADMIN_ACTIONS.replayEvent),
  summary: "Replay an event to 1C",
  description: `Found as for \`GET /integration/v1/admin/events/{event_id}\`. Puts a FAILED_FINAL or waiting event back to PROCESSING with a fresh attempt budget, keeps its history and status URL, and records who asked (the token's owner), when and why. A SUCCEEDED event is refused (409 \`replay-refused\`) unless \`force\` is true: then the same bytes go to 1C with the same Idempotency-Key, and 1C answers with the order it already has. An event with an attempt running is refused (409).${whoMay(ADMIN_ACTIONS.replayEvent)}`,
  params: EventIdParams,
  querystring: SenderQuery,
  headers: CorrelationHeaders,
  body: ReplayBody,
  response: answers(
    {
      202: success(
        "Replayed: pending again.",
        { schema: "ReplayAccepted", examples: { replayed: { value: EXAMPLES.replayed } } },
        { Location: header("Location") },
      ),
    },
    [...LOOK_UP, ...JSON_BODY, "GW_ERR_REPLAY_REFUSED", "GW_ERR_STORAGE_UNAVAILABLE"],
  ),
};
