import { ORDERS_PAID_PATH } from "../../domain/first-answer.ts";
import { PROBLEM_TYPE_BASE, type ProblemKind } from "../../errors/catalogue.ts";
import { ADMIN_PATH } from "../routes/admin.ts";
import type { OperationId } from "./answer-table.ts";
import type { ExampleData } from "./examples.ts";
import {
  DOCS_PATH,
  headerRef,
  JSON_MEDIA_TYPE,
  OPENAPI_PATH,
  PROMETHEUS_MEDIA_TYPE,
  parameterRef,
  schemaRef,
} from "./json.ts";
import type {
  ExampleObject,
  HeaderObject,
  HttpMethod,
  LinkObject,
  OpenApiSources,
  OrRef,
  ParameterObject,
  RequestBodyObject,
  ResponseObject,
  RetryExample,
} from "./types.ts";

/** Every operation of the API: path, method, parameters, body and success answers. */

export interface OperationSpec {
  method: HttpMethod;
  path: string;
  tag: string;
  summary: string;
  description: string;
  security: "sender" | "admin" | "none";
  parameters?: readonly OrRef<ParameterObject>[];
  requestBody?: RequestBodyObject;
  /** Keyed by status; must match ANSWER_TABLE's `success`. */
  success: Readonly<Partial<Record<number, ResponseObject>>>;
  retryExample?: RetryExample;
}

const toStatus: Readonly<Record<string, LinkObject>> = {
  status: {
    operationId: "getOrderPaidStatus",
    parameters: { event_id: "$response.body#/event_id" },
    description: "The status URL (also in Location).",
  },
};

function jsonResponse(
  description: string,
  schema: string,
  headers: Record<string, OrRef<HeaderObject>> = {},
  examples?: Record<string, ExampleObject>,
): ResponseObject {
  return {
    description,
    headers: { "X-Correlation-ID": headerRef("X-Correlation-ID"), ...headers },
    content: { [JSON_MEDIA_TYPE]: { schema: schemaRef(schema), ...(examples ? { examples } : {}) } },
  };
}

export function operationSpecs(
  sources: OpenApiSources,
  ex: ExampleData,
  kinds: Record<string, ProblemKind>,
): Record<OperationId, OperationSpec> {
  const retryExample = (status: number): Record<string, ExampleObject> => {
    const examples: Record<string, ExampleObject> = {};
    ex.retry.steps.forEach((step, index) => {
      if (step.response.status !== status) return;
      examples[`retry-step-${index + 1}`] = {
        summary: `Worked retry, ${step.title}`,
        description: step.explanation,
        value: step.response.body,
      };
    });
    return examples;
  };
  const eventPath = `${ORDERS_PAID_PATH}/{event_id}`;
  const adminEventPath = `${ADMIN_PATH}/events/{event_id}`;
  return {
    postOrderPaid: {
      method: "post",
      path: ORDERS_PAID_PATH,
      tag: "orders",
      security: "sender",
      summary: "Send an order-paid event",
      description: `Records the event durably, delivers it to 1C, and waits up to SYNC_WAIT_MS for the outcome. Validation is strict: no type coercion, unknown properties refused, money as two-decimal strings, a repeated JSON key refused. Business rules: \`order.total\` = Σ quantity × price + \`delivery.price\`; \`payment.amount\` = \`order.total\`; one currency.

Resend the same body under the same \`event_id\` until the answer is final (200/201, 409, 422, 502); see the worked retry example. Answers of this route carry X-RateLimit-* headers while rate limiting is on.`,
      parameters: [parameterRef("CorrelationId"), parameterRef("IdempotencyKey")],
      requestBody: {
        description: `An order-paid event: \`schemas/order-paid.schema.json\`, the schema the gateway validates with. Content-Type \`application/json\` or \`application/*+json\`, any parameters; a \`charset\` other than UTF-8 is 415 (JSON is UTF-8, RFC 8259), and so is any other media type. No \`Content-Encoding\` but \`identity\` (415 with \`Accept-Encoding: identity\`). Bytes that are not UTF-8 are 400 \`invalid-json\`; an integer written with a fraction or an exponent (\`2.0\`, \`2e0\`) is 422 \`schema-violation\`.`,
        required: true,
        content: {
          [JSON_MEDIA_TYPE]: {
            schema: schemaRef("OrderPaidEvent"),
            examples: {
              "order-paid": { summary: "schemas/examples/order-paid.json", value: sources.orderPaidExample },
            },
          },
        },
      },
      success: {
        201: {
          ...jsonResponse(
            "Created: 1C made the order (or already had it) within SYNC_WAIT_MS. This is the event's first answer.",
            "OrderAccepted",
            {
              Location: headerRef("Location"),
              "Idempotent-Replayed": headerRef("Idempotent-Replayed", "`false`: this is the first answer."),
            },
            { created: { summary: "First answer", value: ex.accepted } },
          ),
          links: toStatus,
        },
        200: {
          ...jsonResponse(
            "A repeat of a finished event: the first answer's body, byte for byte.",
            "OrderAccepted",
            {
              Location: headerRef("Location"),
              "Idempotent-Replayed": headerRef("Idempotent-Replayed", "`true`: a repeat."),
            },
            retryExample(200),
          ),
          links: toStatus,
        },
        202: {
          ...jsonResponse(
            "Accepted and durably recorded, not finished: 1C is slow or down, or another request is delivering it. Resend the same body after Retry-After, or poll Location.",
            "EventPending",
            { Location: headerRef("Location"), "Retry-After": headerRef("Retry-After") },
            retryExample(202),
          ),
          links: toStatus,
        },
      },
      retryExample: ex.retry,
    },
    getOrderPaidStatus: {
      method: "get",
      path: eventPath,
      tag: "orders",
      security: "sender",
      summary: "The status URL of an event",
      description:
        "The event's state as the gateway knows it, for the sender that sent it. An unknown event_id, or another sender's, is 404. Answered with Cache-Control: no-store.",
      parameters: [parameterRef("EventId"), parameterRef("CorrelationId")],
      success: {
        200: jsonResponse("The event's status.", "EventStatusView", {}, { succeeded: { value: ex.statusView } }),
      },
    },
    listOrderPaidAttempts: {
      method: "get",
      path: `${eventPath}/attempts`,
      tag: "orders",
      security: "sender",
      summary: "Every delivery attempt of an event",
      description: "Every attempt to deliver the event to 1C, oldest first. 404 as for the status URL.",
      parameters: [parameterRef("EventId"), parameterRef("CorrelationId")],
      success: {
        200: jsonResponse("The attempts.", "AttemptsView", {}, { "retried-then-delivered": { value: ex.attempts } }),
      },
    },
    getProblemType: {
      method: "get",
      path: `${PROBLEM_TYPE_BASE}{slug}`,
      tag: "problems",
      security: "none",
      summary: "Describe a problem type",
      description: "Each problem `type` URI resolves here (RFC 9457).",
      parameters: [parameterRef("ProblemSlug")],
      success: {
        200: jsonResponse("The problem type.", "ProblemTypeDescription", {}, problemTypeExamples(kinds)),
      },
    },
    getHealth: {
      method: "get",
      path: "/healthz",
      tag: "operations",
      security: "none",
      summary: "Liveness",
      description: "200 while the process serves (for a restart policy).",
      success: { 200: jsonResponse("Alive.", "Health") },
    },
    getReadiness: {
      method: "get",
      path: "/readyz",
      tag: "operations",
      security: "none",
      summary: "Readiness",
      description:
        "200 when the gateway can accept events now (the register is writable), 503 otherwise (for a balancer).",
      success: { 200: jsonResponse("Ready.", "Readiness") },
    },
    getMetrics: {
      method: "get",
      path: "/metrics",
      tag: "operations",
      security: "none",
      summary: "Prometheus metrics",
      description: "The Prometheus text exposition format.",
      success: {
        200: {
          description: "Metrics.",
          headers: { "X-Correlation-ID": headerRef("X-Correlation-ID") },
          content: { [PROMETHEUS_MEDIA_TYPE]: { schema: { type: "string" } } },
        },
      },
    },
    listEvents: {
      method: "get",
      path: `${ADMIN_PATH}/events`,
      tag: "admin",
      security: "admin",
      summary: "List events",
      description:
        "Events across senders, newest received first, a page at a time: pass `next_cursor` as `cursor` until it is null. An unknown or malformed query parameter is 400 `bad-request`.",
      parameters: [
        parameterRef("ListStatus"),
        parameterRef("ListSender"),
        parameterRef("ListSince"),
        parameterRef("ListUntil"),
        parameterRef("ListLimit"),
        parameterRef("ListCursor"),
      ],
      success: {
        200: jsonResponse(
          "A page of events.",
          "AdminEventList",
          {},
          {
            page: { value: { events: [ex.adminEvent], next_cursor: null } },
          },
        ),
      },
    },
    getEvent: {
      method: "get",
      path: adminEventPath,
      tag: "admin",
      security: "admin",
      summary: "One event, any sender",
      description:
        "Everything about one event: its status, sender, body, recorded answer, attempts and replays. Support staff know an event by its id alone; when several senders used it, the answer is 409 `ambiguous-event-id` and `sender` picks one.",
      parameters: [parameterRef("EventId"), parameterRef("AdminSender")],
      success: { 200: jsonResponse("The event.", "AdminEventDetail", {}, { event: { value: ex.adminDetail } }) },
    },
    replayEvent: {
      method: "post",
      path: `${adminEventPath}/replay`,
      tag: "admin",
      security: "admin",
      summary: "Replay an event to 1C",
      description:
        "Found as for `GET /integration/v1/admin/events/{event_id}`. Puts a FAILED_FINAL or waiting event back to PROCESSING with a fresh attempt budget, keeps its history and status URL, and records who asked, when and why. A SUCCEEDED event is refused (409 `replay-refused`) unless `force` is true: then the same bytes go to 1C with the same Idempotency-Key, and 1C answers with the order it already has. An event with an attempt running is refused (409).",
      parameters: [parameterRef("EventId"), parameterRef("AdminSender"), parameterRef("CorrelationId")],
      requestBody: {
        description: "Why, and who asks.",
        required: true,
        content: {
          [JSON_MEDIA_TYPE]: {
            schema: schemaRef("ReplayRequest"),
            examples: {
              replay: { value: { reason: "article MUG-010 added in 1C", requested_by: "anna", force: false } },
            },
          },
        },
      },
      success: {
        202: jsonResponse(
          "Replayed: pending again.",
          "ReplayAccepted",
          { Location: headerRef("Location") },
          {
            replayed: { value: ex.replayed },
          },
        ),
      },
    },
    getOpenApi: {
      method: "get",
      path: OPENAPI_PATH,
      tag: "docs",
      security: "none",
      summary: "This OpenAPI document",
      description: "OpenAPI 3.1, generated from the schemas and tables the gateway runs on.",
      success: {
        200: {
          description: "The document.",
          headers: { "X-Correlation-ID": headerRef("X-Correlation-ID") },
          content: { [JSON_MEDIA_TYPE]: { schema: { type: "object", required: ["openapi", "info", "paths"] } } },
        },
      },
    },
    getDocs: {
      method: "get",
      path: DOCS_PATH,
      tag: "docs",
      security: "none",
      summary: "This document as a web page",
      description: "One self-contained HTML page rendered from the OpenAPI document.",
      success: {
        200: {
          description: "The page.",
          headers: { "X-Correlation-ID": headerRef("X-Correlation-ID") },
          content: { "text/html": { schema: { type: "string" } } },
        },
      },
    },
  };
}

function problemTypeExamples(kinds: Record<string, ProblemKind>): Record<string, ExampleObject> {
  const examples: Record<string, ExampleObject> = {};
  for (const [code, kind] of Object.entries(kinds).slice(0, 1)) examples[kind.slug] = { value: { code, ...kind } };
  return examples;
}
