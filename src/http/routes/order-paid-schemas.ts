import { Type } from "typebox";
import { ORDERS_PAID_PATH } from "../../domain/first-answer.ts";
import { schemaRef } from "../openapi/json.ts";
import { EXAMPLES } from "../schemas/examples.ts";
import { answers, EVERY_ROUTE, header, JSON_BODY, PATH_PARAMETER, SENDER_GATE, success } from "../schemas/responses.ts";

/** The senders' routes as the document shows them; the handlers are in order-paid.ts. */

const SENDER_SECURITY = [{ senderBearer: [] }];

/** Behind the senders' rate limit: X-RateLimit-* on every answer to a request it counted. */
const SENDER_ROUTE = { senderRateLimit: true } as const;

const correlationId = Type.String({
  description:
    "1-128 of `A-Z a-z 0-9 . _ : @ / + = -`; anything else is replaced by a UUID (never refused). Echoed on every answer, logged, forwarded to 1C.",
});

/** Request headers are documented, never refused: the gateway replaces a bad correlation id. */
export const CorrelationHeaders = Type.Object({ "X-Correlation-ID": Type.Optional(correlationId) });

/**
 * No constraint beyond "a string": an event_id that is not valid is 404,
 * like an unknown one, so the router's parameter must not answer 400.
 */
export const EventIdParams = Type.Object({
  event_id: Type.String({
    description: "The event's `event_id`, as the sender sent it (see `EventId`); any other value is 404.",
    examples: ["evt-7"],
  }),
});

/** The status URL: in the Location of every answer, and this link. */
const toStatus = {
  status: {
    operationId: "getOrderPaidStatus",
    parameters: { event_id: "$response.body#/event_id" },
    description: "The status URL (also in Location).",
  },
};
export const ORDER_PAID_LINKS = { 201: toStatus, 200: toStatus, 202: toStatus };

/** The worked retry's answers with a given status, as examples of that answer. */
function retryExamples(status: number): Record<string, { summary: string; description: string; value: unknown }> {
  const examples: Record<string, { summary: string; description: string; value: unknown }> = {};
  EXAMPLES.retry.steps.forEach((step, index) => {
    if (step.response.status !== status) return;
    examples[`retry-step-${index + 1}`] = {
      summary: `Worked retry, ${step.title}`,
      description: step.explanation,
      value: step.response.body,
    };
  });
  return examples;
}

export const postOrderPaidSchema = {
  operationId: "postOrderPaid",
  tags: ["orders"],
  security: SENDER_SECURITY,
  summary: "Send an order-paid event",
  description: `Records the event durably, delivers it to 1C, and waits up to SYNC_WAIT_MS for the outcome. Validation is strict: no type coercion, unknown properties refused, money as two-decimal strings, a repeated JSON key refused. Business rules: \`order.total\` = Σ quantity × price + \`delivery.price\`; \`payment.amount\` = \`order.total\`; one currency.

Resend the same body under the same \`event_id\` until the answer is final (200/201, 409, 422, 502); see the worked retry example. While rate limiting is on, every answer to a request counted against the sender's limit carries X-RateLimit-* headers (not a 401, nor a refusal made before the token is read).`,
  headers: Type.Object({
    "X-Correlation-ID": Type.Optional(correlationId),
    "Idempotency-Key": Type.Optional(
      Type.String({
        description:
          'Optional (IETF draft), bare or quoted (`"evt-7"`); it must equal the body\'s `event_id` (400 otherwise).',
      }),
    ),
  }),
  // Documented only: the route's validator compiler accepts anything, and
  // admitOrderPaid checks the body against this same schema after the strict parse.
  body: {
    allOf: [schemaRef("OrderPaidEvent")],
    description: `An order-paid event: \`schemas/order-paid.schema.json\`, the schema the gateway validates with. Content-Type \`application/json\` or \`application/*+json\`, any parameters; a \`charset\` other than UTF-8 is 415 (JSON is UTF-8, RFC 8259), and so is any other media type. No \`Content-Encoding\` but \`identity\` (415 with \`Accept-Encoding: identity\`). Bytes that are not UTF-8 are 400 \`invalid-json\`; an integer written with a fraction or an exponent (\`2.0\`, \`2e0\`) is 422 \`schema-violation\`.`,
    examples: [EXAMPLES.event],
  },
  response: answers(
    {
      201: success(
        "Created: 1C made the order (or already had it) within SYNC_WAIT_MS. This is the event's first answer.",
        { schema: "OrderAccepted", examples: { created: { summary: "First answer", value: EXAMPLES.accepted } } },
        {
          Location: header("Location"),
          "Idempotent-Replayed": header("Idempotent-Replayed", "`false`: this is the first answer."),
        },
      ),
      200: success(
        "A repeat of a finished event: the first answer's body, byte for byte.",
        { schema: "OrderAccepted", examples: retryExamples(200) },
        { Location: header("Location"), "Idempotent-Replayed": header("Idempotent-Replayed", "`true`: a repeat.") },
      ),
      202: success(
        "Accepted and durably recorded, not finished: 1C is slow or down, or another request is delivering it. Resend the same body after Retry-After, or poll Location.",
        { schema: "EventPending", examples: retryExamples(202) },
        { Location: header("Location"), "Retry-After": header("Retry-After") },
      ),
    },
    [
      ...EVERY_ROUTE,
      ...SENDER_GATE,
      ...JSON_BODY,
      "GW_ERR_INVALID_EVENT_ID",
      "GW_ERR_IDEMPOTENCY_KEY_MISMATCH",
      "GW_ERR_EVENT_ID_CONFLICT",
      "GW_ERR_SCHEMA_VIOLATION",
      "GW_ERR_BUSINESS_RULES",
      "GW_ERR_ONEC_REJECTED",
      "GW_ERR_ONEC_CONFLICT",
      "GW_ERR_DELIVERY_ABANDONED",
      "GW_ERR_STORAGE_UNAVAILABLE",
    ],
    SENDER_ROUTE,
  ),
  "x-retry-example": EXAMPLES.retry,
};

const LOOK_UP = [
  ...EVERY_ROUTE,
  ...PATH_PARAMETER,
  ...SENDER_GATE,
  "GW_ERR_NOT_FOUND",
  "GW_ERR_STORAGE_UNAVAILABLE",
] as const;

export const getOrderPaidStatusSchema = {
  operationId: "getOrderPaidStatus",
  tags: ["orders"],
  security: SENDER_SECURITY,
  summary: "The status URL of an event",
  description:
    "The event's state as the gateway knows it, for the sender that sent it. An unknown event_id, or another sender's, is 404. Answered with Cache-Control: no-store.",
  params: EventIdParams,
  headers: CorrelationHeaders,
  response: answers(
    {
      200: success("The event's status.", {
        schema: "EventStatusView",
        examples: { succeeded: { value: EXAMPLES.statusView } },
      }),
    },
    LOOK_UP,
    SENDER_ROUTE,
  ),
};

export const listOrderPaidAttemptsSchema = {
  operationId: "listOrderPaidAttempts",
  tags: ["orders"],
  security: SENDER_SECURITY,
  summary: "Every delivery attempt of an event",
  description: "Every attempt to deliver the event to 1C, oldest first. 404 as for the status URL.",
  params: EventIdParams,
  headers: CorrelationHeaders,
  response: answers(
    {
      200: success("The attempts.", {
        schema: "AttemptsView",
        examples: { "retried-then-delivered": { value: EXAMPLES.attempts } },
      }),
    },
    LOOK_UP,
    SENDER_ROUTE,
  ),
};

export const EVENT_PATH = `${ORDERS_PAID_PATH}/:event_id`;
