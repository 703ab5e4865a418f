import { readFileSync } from "node:fs";
import { STATUS_CODES } from "node:http";
import { canonicalizeEvent } from "../../domain/fingerprint.ts";
import { orderPaidSchema } from "../../domain/validate-order-paid.ts";
import { PROBLEM_TYPE_BASE, type ProblemKind, problems } from "../../errors/catalogue.ts";
import { ALL_STATUSES, EventStatus } from "../../register/event-status.ts";
import type { AttemptRecord, EventRecord, OnecOrder } from "../../register/port.ts";
import {
  abandonedSnapshot,
  attemptView,
  ORDERS_PAID_PATH,
  refusalSnapshot,
  statusUrl,
  statusView,
  successSnapshot,
} from "../answers.ts";
import { ADMIN_PATH, replayBodySchema } from "../routes/admin.ts";
import {
  ANSWER_TABLE,
  type DocumentedCode,
  type OperationId,
  PROBLEM_HEADERS,
  type ProblemHeader,
} from "./answer-table.ts";
import type {
  ExampleObject,
  HeaderObject,
  HttpMethod,
  JsonObject,
  JsonValue,
  LinkObject,
  OpenApiDocument,
  OperationObject,
  OrRef,
  ParameterObject,
  PathItemObject,
  Ref,
  RequestBodyObject,
  ResponseObject,
  RetryExample,
} from "./types.ts";

/** Everything the document is made from; `buildOpenApi` reads nothing else. */
export interface OpenApiSources {
  /** package.json's version. */
  readonly version: string;
  /** The JSON Schema the order-paid route validates with (draft 2020-12, with `$defs`). */
  readonly orderPaidSchema: JsonObject;
  /** schemas/examples/order-paid.json */
  readonly orderPaidExample: JsonObject;
  /** catalogue.ts's `problems`. */
  readonly problems: Readonly<Record<string, ProblemKind>>;
}

export const OPENAPI_VERSION = "3.1.0";
export const PROBLEM_MEDIA_TYPE = "application/problem+json";
export const JSON_MEDIA_TYPE = "application/json";
export const DOCS_PATH = "/docs";
export const OPENAPI_PATH = "/openapi.json";
const PROMETHEUS_MEDIA_TYPE = "text/plain; version=0.0.4";

const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string, description?: string): Ref =>
  description === undefined
    ? { $ref: `#/components/headers/${name}` }
    : { $ref: `#/components/headers/${name}`, description };
const parameterRef = (name: string): Ref => ({ $ref: `#/components/parameters/${name}` });

/** The sources as the running gateway has them: the very schema object its validator compiled. */
export function loadOpenApiSources(): OpenApiSources {
  const root = new URL("../../../", import.meta.url);
  const pkg = asJsonObject(JSON.parse(readFileSync(new URL("package.json", root), "utf8")), "package.json");
  const example = JSON.parse(readFileSync(new URL("schemas/examples/order-paid.json", root), "utf8"));
  return {
    version: typeof pkg.version === "string" ? pkg.version : "0.0.0",
    orderPaidSchema: asJsonObject(structuredClone(orderPaidSchema), "order-paid schema"),
    orderPaidExample: asJsonObject(example, "order-paid example"),
    problems,
  };
}

/** `money` in the schema's `$defs` is `#/components/schemas/Money` in the document. */
export function defComponentName(defName: string): string {
  return defName.charAt(0).toUpperCase() + defName.slice(1);
}

/**
 * The OpenAPI 3.1 document of the gateway's HTTP API. Pure: the same sources
 * give the same document. The answers come from ANSWER_TABLE, the problem
 * types from the catalogue, the request body from the validator's own schema.
 */
export function buildOpenApi(sources: OpenApiSources = loadOpenApiSources()): OpenApiDocument {
  const kinds = sources.problems;
  const orderPaid = hoistDefs(sources.orderPaidSchema);
  const examples = exampleData(sources.orderPaidExample, kinds);

  const schemas: Record<string, JsonObject> = {};
  const addSchema = (name: string, schema: JsonObject) => {
    if (name in schemas) throw new Error(`two component schemas named ${name}`);
    schemas[name] = schema;
  };
  addSchema("OrderPaidEvent", orderPaid.root);
  for (const [name, schema] of Object.entries(orderPaid.defs)) addSchema(name, schema);
  for (const [name, schema] of Object.entries(viewSchemas(kinds))) addSchema(name, schema);
  for (const [code, kind] of Object.entries(kinds)) addSchema(code, problemSchema(code, kind));

  const specs = operationSpecs(sources, examples, kinds);
  const paths: Record<string, Partial<Record<HttpMethod, OperationObject>>> = {};
  for (const [id, spec] of Object.entries(specs) as [OperationId, OperationSpec][]) {
    const answers = ANSWER_TABLE[id];
    const declared = Object.keys(spec.success).map(Number);
    const missing = answers.success.filter((status) => !declared.includes(status));
    const extra = declared.filter((status) => !answers.success.includes(status));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `${id}: ANSWER_TABLE says ${answers.success.join(",")}, the spec describes ${declared.join(",")}`,
      );
    }
    const responses: Record<string, ResponseObject> = {};
    for (const status of answers.success) {
      const response = spec.success[status];
      if (response !== undefined) responses[String(status)] = response;
    }
    for (const [status, response] of Object.entries(problemResponses(answers.problems, kinds, examples.problems))) {
      if (status in responses) throw new Error(`${id}: ${status} is both a success and a problem`);
      responses[status] = response;
    }
    const operation: OperationObject = {
      operationId: id,
      summary: spec.summary,
      description: spec.description,
      tags: [spec.tag],
      security: spec.security === "none" ? [] : [{ [`${spec.security}Bearer`]: [] }],
      ...(spec.parameters === undefined ? {} : { parameters: spec.parameters }),
      ...(spec.requestBody === undefined ? {} : { requestBody: spec.requestBody }),
      responses: sortByStatus(responses),
      ...(spec.retryExample === undefined ? {} : { "x-retry-example": spec.retryExample }),
    };
    paths[spec.path] = { ...paths[spec.path], [spec.method]: operation };
  }

  return {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "1C order gateway",
      version: sources.version,
      summary: "Exactly-once delivery of paid-order events from e-commerce sites to 1C:Enterprise",
      description: INFO_DESCRIPTION,
    },
    servers: [{ url: "/", description: "This gateway" }],
    tags: [
      { name: "orders", description: "Senders: post paid-order events and follow them." },
      { name: "problems", description: "Every problem `type` URI resolves here." },
      { name: "operations", description: "Probes and metrics for the platform." },
      { name: "admin", description: "Support staff; only when ADMIN_TOKEN is set (404 otherwise)." },
      { name: "docs", description: "This document and its page." },
    ],
    paths: paths as Record<string, PathItemObject>,
    components: {
      schemas,
      headers: HEADERS,
      parameters: parameters(orderPaid, kinds),
      securitySchemes: {
        senderBearer: {
          type: "http",
          scheme: "bearer",
          description:
            "Each sender's own token (SENDER_TOKENS or SENDERS_FILE): `Authorization: Bearer <sender token>`. A missing or unknown token is 401 `unauthorized` and records nothing. Events and their status URLs are scoped to the sender: another sender's event_id is 404. Only a gateway run without senders and with ALLOW_ANONYMOUS=true takes requests without a token (all of them as the sender `default`).",
        },
        adminBearer: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <ADMIN_TOKEN>`. The admin routes exist only when ADMIN_TOKEN is set; without a token 401 `unauthorized`, with a wrong one 403 `forbidden`.",
        },
      },
    },
  };
}

const INFO_DESCRIPTION = `Exactly-once gateway for paid-order events from e-commerce sites to 1C:Enterprise. A sender posts an order-paid event; the gateway records it durably, delivers it to 1C, and answers every repeat of it with the same outcome.

**Idempotency rules**

- \`event_id\` is the idempotency key: make it once per business event (1-128 of \`A-Z a-z 0-9 . _ : -\`) and send the same body under it on every retry. An \`Idempotency-Key\` header is optional and must equal \`event_id\`.
- Event ids are scoped per sender: two senders may use the same \`event_id\` without meeting.
- A repeat never makes a second order. A finished event answers every repeat with the first answer's bytes and \`Idempotent-Replayed: true\` (a success is then 200 instead of 201; a 422 or 502 stays as it was).
- Not finished yet (1C slow or down, or another request is delivering it): 202 with \`Location\` (the status URL) and \`Retry-After\`. The event is committed and will not be lost: resend the same body after \`Retry-After\` seconds, or poll the status URL.
- The same \`event_id\` with another body: 409 \`event-id-conflict\`. A new event needs a new \`event_id\`.
- Refused before anything was recorded (400, 401, 408, 413, 415, 429, 503, and 422 \`schema-violation\` / \`business-rules-violated\`): fix what the problem says and send again under the same \`event_id\`.
- Final refusals (422 \`onec-rejected\`, \`onec-conflict\`; 502 \`delivery-abandoned\`): do not resend; support replays the event once the cause is fixed.

**Errors** are RFC 9457 \`application/problem+json\` documents with \`type\`, \`title\`, \`status\`, \`detail\`, \`code\`, \`correlation_id\` and \`retryable\`; every \`type\` resolves at \`GET /integration/v1/problems/{slug}\`. An unknown route is 404 \`not-found\`. A 500 is a bug, never an answer to bad data.

**Correlation**: send \`X-Correlation-ID\` (1-128 of \`A-Z a-z 0-9 . _ : @ / + = -\`) or the gateway makes a UUID; it comes back on every answer, is written on every log line and is forwarded to 1C.`;

// ---------------------------------------------------------------- schemas

interface Hoisted {
  root: JsonObject;
  defs: Record<string, JsonObject>;
}

/**
 * `$defs` become component schemas and their `$ref`s point there, so the
 * schema is valid as a component and its refs resolve inside the document.
 * `$id` goes too: it would make those refs resolve against the schema's URL.
 */
function hoistDefs(schema: JsonObject): Hoisted {
  const { $defs, $id: _id, $schema: _dialect, ...root } = schema;
  const defs: Record<string, JsonObject> = {};
  const defsObject = $defs === undefined ? {} : asJsonObject($defs, "$defs");
  for (const [name, def] of Object.entries(defsObject)) {
    defs[defComponentName(name)] = asJsonObject(rewriteRefs(def), `$defs/${name}`);
  }
  return { root: asJsonObject(rewriteRefs(root), "order-paid schema"), defs };
}

function rewriteRefs(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, JsonValue> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$ref" && typeof inner === "string") {
      const match = /^#\/\$defs\/([^/]+)$/.exec(inner);
      if (match?.[1] === undefined) throw new Error(`unsupported $ref ${inner} in the order-paid schema`);
      out[key] = `#/components/schemas/${defComponentName(match[1])}`;
    } else {
      out[key] = rewriteRefs(inner);
    }
  }
  return out;
}

const nullable = (type: string, extra: JsonObject = {}): JsonObject => ({ type: [type, "null"], ...extra });
const dateTime: JsonObject = { type: "string", format: "date-time" };

/** The fields of `statusView()` in answers.ts. */
const statusViewProperties: JsonObject = {
  event_id: schemaRef("EventId"),
  status: schemaRef("EventStatus"),
  attempts: { type: "integer", minimum: 0, description: "Attempts started, replays included." },
  order: { oneOf: [schemaRef("OnecOrder"), { type: "null" }] },
  error: nullable("string", { description: "Why the last attempt failed." }),
  error_class: nullable("string", {
    description:
      "e.g. `http_503`, `timeout`, `onec_unauthorized`; for FAILED_FINAL `onec_rejected`, `onec_conflict`, `max_attempts`, `max_age`, `crash_loop`.",
  }),
  next_attempt_at: nullable("string", { format: "date-time", description: "Set while pending." }),
  received_at: dateTime,
  updated_at: dateTime,
  correlation_id: { type: "string", description: "The X-Correlation-ID of the request that recorded it." },
};

function viewSchemas(kinds: Record<string, ProblemKind>): Record<string, JsonObject> {
  return {
    EventStatus: {
      type: "string",
      enum: [...ALL_STATUSES],
      description:
        "`PROCESSING`: recorded; an attempt runs or is due. `FAILED_RETRYABLE`: the last attempt failed for a passing reason; another follows at `next_attempt_at`. `SUCCEEDED`: 1C has the order. `FAILED_FINAL`: 1C refused it, or the gateway gave up.",
    },
    OnecOrder: {
      type: "object",
      required: ["id", "number"],
      properties: { id: { type: "string" }, number: { type: "string" } },
      description: "The order 1C made for the event.",
    },
    OrderAccepted: {
      type: "object",
      required: ["event_id", "status", "order", "status_url"],
      properties: {
        event_id: schemaRef("EventId"),
        status: { const: EventStatus.SUCCEEDED },
        order: schemaRef("OnecOrder"),
        status_url: { type: "string", format: "uri-reference" },
      },
      description: "1C has the order. A repeat gets these very bytes again, with 200.",
    },
    EventPending: {
      type: "object",
      required: ["event_id", "status", "status_url"],
      properties: {
        event_id: schemaRef("EventId"),
        status: { enum: [EventStatus.PROCESSING, EventStatus.FAILED_RETRYABLE] },
        status_url: { type: "string", format: "uri-reference" },
      },
      description: "Recorded durably, not delivered yet. Resend after Retry-After, or poll status_url.",
    },
    EventStatusView: {
      type: "object",
      required: [
        "event_id",
        "status",
        "attempts",
        "order",
        "error",
        "error_class",
        "next_attempt_at",
        "received_at",
        "updated_at",
        "correlation_id",
      ],
      properties: statusViewProperties,
      description: "The status URL's answer.",
    },
    AttemptView: {
      type: "object",
      required: [
        "attempt",
        "started_at",
        "finished_at",
        "duration_ms",
        "outcome",
        "http_status",
        "error_class",
        "detail",
        "worker",
        "applied",
      ],
      properties: {
        attempt: { type: "integer", minimum: 1 },
        started_at: dateTime,
        finished_at: nullable("string", { format: "date-time" }),
        duration_ms: nullable("integer"),
        outcome: {
          type: "string",
          description:
            "`delivered`, `rejected`, `conflict`, `unauthorized`, `retryable`, or `unfinished` (the process stopped during the call).",
        },
        http_status: nullable("integer", { description: "1C's HTTP status, if it answered." }),
        error_class: nullable("string"),
        detail: nullable("string"),
        worker: { type: "string", description: "host:pid:id of the process that ran it." },
        applied: nullable("boolean", {
          description: "false: it finished after its lease expired and another attempt took over; kept here only.",
        }),
      },
    },
    AttemptsView: {
      type: "object",
      required: ["event_id", "status", "attempts"],
      properties: {
        event_id: schemaRef("EventId"),
        status: schemaRef("EventStatus"),
        attempts: { type: "array", items: schemaRef("AttemptView") },
      },
      description: "Every attempt to deliver the event to 1C, kept for good.",
    },
    ProblemFieldError: {
      type: "object",
      required: ["path", "rule", "message"],
      properties: {
        path: { type: "string", description: "JSON Pointer into the request body." },
        rule: { type: "string", description: "The schema keyword or business rule that refused it." },
        message: { type: "string" },
      },
    },
    Problem: {
      type: "object",
      required: ["type", "title", "status", "detail", "code", "correlation_id", "retryable"],
      properties: {
        type: {
          type: "string",
          format: "uri-reference",
          description: `\`${PROBLEM_TYPE_BASE}<slug>\`; resolves to the problem type's description.`,
        },
        title: { type: "string" },
        status: { type: "integer", minimum: 400, maximum: 599 },
        detail: { type: "string", description: "What happened to this request, and what to do." },
        code: { type: "string", enum: Object.keys(kinds) },
        correlation_id: { type: "string" },
        retryable: {
          type: "boolean",
          description: "Whether the same request with the same event_id may succeed later.",
        },
        instance: { type: "string" },
        event_id: schemaRef("EventId"),
        status_url: { type: "string", format: "uri-reference" },
        errors: {
          type: "array",
          items: schemaRef("ProblemFieldError"),
          description: "schema-violation and business-rules-violated: every refused field.",
        },
        onec_error: {
          type: "object",
          required: ["code", "message"],
          properties: { code: { type: "string" }, message: { type: "string" } },
          description: "onec-rejected and onec-conflict: what 1C said.",
        },
      },
      description: "RFC 9457 problem details with the gateway's extension members.",
    },
    ProblemTypeDescription: {
      type: "object",
      required: ["code", "status", "slug", "title", "retryable"],
      properties: {
        code: { type: "string" },
        status: { type: "integer" },
        slug: { type: "string" },
        title: { type: "string" },
        retryable: { type: "boolean" },
      },
    },
    Health: { type: "object", required: ["status"], properties: { status: { const: "ok" } } },
    Readiness: { type: "object", required: ["status"], properties: { status: { const: "ready" } } },
    // The very schema adminRoutes validates the body with.
    ReplayRequest: structuredClone(replayBodySchema) as unknown as JsonObject,
    ReplayAccepted: {
      allOf: [schemaRef("EventStatusView")],
      type: "object",
      required: ["sender", "replayed_from", "status_url"],
      properties: {
        sender: { type: "string" },
        replayed_from: schemaRef("EventStatus"),
        status_url: { type: "string", format: "uri-reference" },
      },
      description: "The event is pending again with a fresh attempt budget; its history and status URL are kept.",
    },
    AdminEventView: {
      allOf: [schemaRef("EventStatusView")],
      type: "object",
      required: ["sender"],
      properties: { sender: { type: "string" } },
      description: "The status view with the sender the event belongs to.",
    },
    AdminEventDetail: {
      type: "object",
      required: [
        ...new Set([
          ...Object.keys(statusViewProperties),
          "sender",
          "status_url",
          "body",
          "fingerprint",
          "policy_version",
          "lease",
          "response",
          "replays",
        ]),
      ],
      properties: {
        ...statusViewProperties,
        sender: { type: "string" },
        status_url: { type: "string", format: "uri-reference" },
        body: { ...schemaRef("OrderPaidEvent"), description: "The accepted event, as delivered to 1C." },
        fingerprint: { type: "string" },
        policy_version: { type: "string" },
        lease: {
          oneOf: [
            {
              type: "object",
              required: ["owner", "until"],
              properties: { owner: nullable("string"), until: dateTime },
              description: "The attempt running now.",
            },
            { type: "null" },
          ],
        },
        response: {
          oneOf: [
            {
              type: "object",
              required: ["status", "body"],
              properties: { status: { type: "integer" }, body: { type: "string" } },
              description: "The recorded final answer that every repeat gets, byte for byte.",
            },
            { type: "null" },
          ],
        },
        attempts: {
          type: "array",
          items: schemaRef("AttemptView"),
          description: "Every attempt (here `attempts` is the list, not the count of the status view).",
        },
        replays: { type: "array", items: schemaRef("ReplayRecord") },
      },
      description: "Everything the gateway holds about one event: the status view's fields and more.",
    },
    ReplayRecord: {
      type: "object",
      required: ["requested_by", "reason", "forced", "from_status", "requested_at"],
      properties: {
        requested_by: { type: "string" },
        reason: { type: "string" },
        forced: { type: "boolean" },
        from_status: schemaRef("EventStatus"),
        requested_at: dateTime,
      },
      description: "Who replayed the event, when and why.",
    },
    AdminEventList: {
      type: "object",
      required: ["events", "next_cursor"],
      properties: {
        events: { type: "array", items: schemaRef("AdminEventView") },
        next_cursor: nullable("string", { description: "Pass as `cursor` for the next page; null on the last." }),
      },
    },
  };
}

function problemSchema(code: string, kind: ProblemKind): JsonObject {
  return {
    title: kind.title,
    description: `\`${PROBLEM_TYPE_BASE}${kind.slug}\` (${kind.status}). Retryable: ${kind.retryable ? "yes" : "no"}.`,
    allOf: [schemaRef("Problem")],
    type: "object",
    properties: {
      type: { const: PROBLEM_TYPE_BASE + kind.slug },
      title: { const: kind.title },
      status: { const: kind.status },
      code: { const: code },
      retryable: { const: kind.retryable },
    },
  };
}

// ---------------------------------------------------------------- headers and parameters

const HEADERS: Record<string, HeaderObject> = {
  "X-Correlation-ID": {
    description:
      "On every answer: the sender's X-Correlation-ID if it was valid, else a UUID the gateway made. Quote it to support.",
    required: true,
    schema: { type: "string", maxLength: 128 },
    example: "shop-a-100234",
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

function parameters(orderPaid: Hoisted, kinds: Record<string, ProblemKind>): Record<string, ParameterObject> {
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

// ---------------------------------------------------------------- problem answers

function problemResponses(
  codes: readonly DocumentedCode[],
  kinds: Record<string, ProblemKind>,
  examples: Record<string, JsonObject>,
): Record<string, ResponseObject> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const kind = kinds[code];
    // A planned code that the catalogue dropped: nothing sends it any more.
    if (kind === undefined) continue;
    byStatus.set(kind.status, [...(byStatus.get(kind.status) ?? []), code]);
  }
  const responses: Record<string, ResponseObject> = {};
  for (const [status, group] of byStatus) {
    const slugs = (list: readonly string[]) => list.map((code) => `\`${kinds[code]?.slug}\``).join(", ");
    const headers: Record<string, OrRef<HeaderObject>> = { "X-Correlation-ID": headerRef("X-Correlation-ID") };
    const headerNames = new Set(group.flatMap((code) => PROBLEM_HEADERS[code as DocumentedCode] ?? []));
    for (const name of headerNames) {
      const carriers = group.filter((code) => PROBLEM_HEADERS[code as DocumentedCode]?.includes(name as ProblemHeader));
      headers[name] = headerRef(
        name,
        carriers.length === group.length
          ? HEADERS[name]?.description
          : `${HEADERS[name]?.description} Sent with ${slugs(carriers)}.`,
      );
    }
    const exampleMap: Record<string, ExampleObject> = {};
    for (const code of group) {
      const kind = kinds[code];
      const value = examples[code] ?? problemExample(code, kinds, kind?.title ?? code);
      exampleMap[code] = { summary: `${kind?.slug}: ${kind?.title}`, value };
    }
    const refs = group.map(schemaRef);
    responses[String(status)] = {
      description: `${STATUS_CODES[status] ?? "Error"}: ${group.map((code) => kinds[code]?.title).join("; ")}.`,
      headers,
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: refs.length === 1 && refs[0] !== undefined ? refs[0] : { oneOf: refs },
          examples: exampleMap,
        },
      },
    };
  }
  return responses;
}

function problemExample(
  code: string,
  kinds: Record<string, ProblemKind>,
  detail: string,
  extras: JsonObject = {},
): JsonObject {
  const kind = kinds[code];
  if (kind === undefined) throw new Error(`no problem kind ${code}`);
  return {
    type: PROBLEM_TYPE_BASE + kind.slug,
    title: kind.title,
    status: kind.status,
    detail,
    code,
    correlation_id: EXAMPLE_CORRELATION_ID,
    retryable: kind.retryable,
    ...extras,
  };
}

function sortByStatus(responses: Record<string, ResponseObject>): Record<string, ResponseObject> {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

// ---------------------------------------------------------------- examples

const EXAMPLE_CORRELATION_ID = "shop-a-100234";
const EXAMPLE_ORDER: OnecOrder = { id: "8023a5b8-5d1e-4c52-9a57-1f2e3d4c5b6a", number: "ORD-000001" };
const T0 = Date.parse("2026-11-29T12:35:00.000Z");

interface ExampleData {
  eventId: string;
  event: JsonObject;
  location: string;
  accepted: JsonObject;
  processing: JsonObject;
  waiting: JsonObject;
  statusView: JsonObject;
  attempts: JsonObject;
  adminEvent: JsonObject;
  adminDetail: JsonObject;
  replayed: JsonObject;
  problems: Record<string, JsonObject>;
  retry: RetryExample;
}

/** Example bodies made by the same functions that make the real answers. */
function exampleData(event: JsonObject, kinds: Record<string, ProblemKind>): ExampleData {
  const eventId = typeof event.event_id === "string" ? event.event_id : "evt-7";
  const location = statusUrl(eventId);
  const canonical = canonicalizeEvent(event);
  const record: EventRecord = {
    sender: "shop-a",
    eventId,
    fingerprint: canonical.fingerprint,
    policyVersion: canonical.policy,
    status: EventStatus.SUCCEEDED,
    correlationId: EXAMPLE_CORRELATION_ID,
    body: canonical.text,
    response: null,
    order: EXAMPLE_ORDER,
    lastError: null,
    lastErrorClass: null,
    attempts: 2,
    finishedAttempts: 2,
    roundAttempts: 2,
    roundStartedAt: T0,
    leaseOwner: null,
    leaseToken: 2,
    leaseUntil: null,
    nextAttemptAt: null,
    receivedAt: T0,
    updatedAt: T0 + 5_200,
  };
  const attempt = (n: number, outcome: string, httpStatus: number, errorClass: string | null, detail: string) =>
    attemptView({
      attempt: n,
      leaseToken: n,
      worker: "gw-1:4242:1f0c",
      startedAt: T0 + (n - 1) * 5_000,
      finishedAt: T0 + (n - 1) * 5_000 + 120,
      durationMs: 120,
      outcome,
      httpStatus,
      errorClass,
      detail,
      applied: true,
    } satisfies AttemptRecord);
  const attempts = [
    asJsonObject(attempt(1, "retryable", 503, "http_503", "1C answered 503: temporarily unavailable"), "attempt"),
    asJsonObject(attempt(2, "delivered", 201, null, EXAMPLE_ORDER.number), "attempt"),
  ];
  const accepted = parseJson(successSnapshot(eventId, EXAMPLE_ORDER).body);
  const pending = (status: string) => ({ event_id: eventId, status, status_url: location });
  const view = asJsonObject(statusView(record), "status view");
  const edited = asJsonObject(structuredClone(event), "event");
  const order = asJsonObject(edited.order ?? {}, "order");
  const editedEvent: JsonObject = { ...edited, order: { ...order, number: `${String(order.number)}-B` } };
  const conflict = problemExample(
    "GW_ERR_EVENT_ID_CONFLICT",
    kinds,
    `event_id "${eventId}" was accepted at ${new Date(T0).toISOString()} with another body; send a new event_id for a new event`,
    { event_id: eventId, status_url: location },
  );
  const post = (headers: Record<string, string>, body: JsonValue) => ({
    method: "POST",
    path: ORDERS_PAID_PATH,
    headers: {
      Authorization: "Bearer <sender token>",
      "Content-Type": "application/json",
      "X-Correlation-ID": EXAMPLE_CORRELATION_ID,
      ...headers,
    },
    body,
  });
  const answerHeaders = (headers: Record<string, string>) => ({
    "X-Correlation-ID": EXAMPLE_CORRELATION_ID,
    ...headers,
  });

  return {
    eventId,
    event,
    location,
    accepted,
    processing: pending(EventStatus.PROCESSING),
    waiting: pending(EventStatus.FAILED_RETRYABLE),
    statusView: view,
    attempts: {
      event_id: eventId,
      status: EventStatus.SUCCEEDED,
      attempts,
    },
    adminEvent: { sender: record.sender, ...view },
    adminDetail: {
      sender: record.sender,
      ...view,
      status_url: location,
      body: parseJson(canonical.text),
      fingerprint: record.fingerprint,
      policy_version: record.policyVersion,
      lease: null,
      response: { status: 201, body: successSnapshot(eventId, EXAMPLE_ORDER).body },
      attempts,
      replays: [],
    },
    replayed: {
      sender: record.sender,
      ...asJsonObject(
        statusView({
          ...record,
          status: EventStatus.PROCESSING,
          order: null,
          attempts: 3,
          lastError: "1C refused the order: unknown article MUG-010",
          lastErrorClass: "onec_rejected",
          nextAttemptAt: T0 + 600_000,
          updatedAt: T0 + 600_000,
        }),
        "status view",
      ),
      replayed_from: EventStatus.FAILED_FINAL,
      status_url: location,
    },
    problems: {
      GW_ERR_EVENT_ID_CONFLICT: conflict,
      GW_ERR_SCHEMA_VIOLATION: problemExample(
        "GW_ERR_SCHEMA_VIOLATION",
        kinds,
        "1 field(s) do not match the order-paid schema",
        {
          errors: [{ path: "/order/total", rule: "type", message: "must be string" }],
          event_id: eventId,
        },
      ),
      GW_ERR_BUSINESS_RULES: problemExample("GW_ERR_BUSINESS_RULES", kinds, "1 business rule(s) violated", {
        errors: [
          {
            path: "/payment/amount",
            rule: "payment-equals-total",
            message: "payment.amount is 1800.00, but order.total is 1890.00",
          },
        ],
        event_id: eventId,
      }),
      GW_ERR_ONEC_REJECTED: parseJson(
        refusalSnapshot(
          eventId,
          "GW_ERR_ONEC_REJECTED",
          "1C refused the order: unknown article MUG-010",
          { code: "UNKNOWN_SKU", message: "unknown article MUG-010" },
          EXAMPLE_CORRELATION_ID,
        ).body,
      ),
      GW_ERR_DELIVERY_ABANDONED: parseJson(
        abandonedSnapshot(eventId, "max_attempts", "1C answered 503 on 12 attempts", EXAMPLE_CORRELATION_ID).body,
      ),
      GW_ERR_UNAUTHORIZED: problemExample(
        "GW_ERR_UNAUTHORIZED",
        kinds,
        "send Authorization: Bearer <your sender token>",
      ),
      GW_ERR_RATE_LIMITED: problemExample(
        "GW_ERR_RATE_LIMITED",
        kinds,
        'more than 100 requests in 60 s from sender "shop-a"; retry after 12 seconds',
      ),
      GW_ERR_STORAGE_UNAVAILABLE: problemExample(
        "GW_ERR_STORAGE_UNAVAILABLE",
        kinds,
        "the event register is unavailable; nothing was recorded, retry with the same event_id",
      ),
    },
    retry: {
      summary:
        "1C is slow, then down for a moment, then back. The sender resends the same body under the same event_id until the answer is final; 1C gets the order once.",
      steps: [
        {
          title: "First send: 202",
          explanation:
            "1C did not answer within SYNC_WAIT_MS. The event is committed and will not be lost; the gateway goes on delivering it.",
          request: post({}, event),
          response: {
            status: 202,
            headers: answerHeaders({ Location: location, "Retry-After": "1" }),
            body: pending(EventStatus.PROCESSING),
          },
        },
        {
          title: "Resend after Retry-After: 202 again",
          explanation:
            "The attempt failed for a passing reason (1C answered 503); the next one is due in 4 s. No second call to 1C is made while one runs.",
          request: post({}, event),
          response: {
            status: 202,
            headers: answerHeaders({ Location: location, "Retry-After": "4" }),
            body: pending(EventStatus.FAILED_RETRYABLE),
          },
        },
        {
          title: "Resend once more: 200, replayed",
          explanation:
            "1C created the order in the meantime. The answer is the first answer's body byte for byte, with 200 and Idempotent-Replayed: true; every later repeat gets the same.",
          request: post({}, event),
          response: {
            status: 200,
            headers: answerHeaders({ Location: location, "Idempotent-Replayed": "true" }),
            body: accepted,
          },
        },
        {
          title: "Another body under the same event_id: 409",
          explanation:
            "Someone edited the order and resent it under the old event_id. A new event needs a new event_id.",
          request: post({}, editedEvent),
          response: { status: 409, headers: answerHeaders({ Location: location }), body: conflict },
        },
      ],
    },
  };
}

// ---------------------------------------------------------------- operations

interface OperationSpec {
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

function operationSpecs(
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
        description: `An order-paid event: \`schemas/order-paid.schema.json\`, the schema the gateway validates with. Content-Type \`application/json\` (any charset); anything else is 415.`,
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

// ---------------------------------------------------------------- JSON helpers

function parseJson(text: string): JsonObject {
  return asJsonObject(JSON.parse(text), "example");
}

/** Checks that a value is plain JSON (what JSON.parse or a literal gives) and types it so. */
export function asJsonObject(value: unknown, what: string): JsonObject {
  if (!isJson(value) || typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`${what} is not a JSON object`);
  }
  return value as JsonObject;
}

function isJson(value: unknown): value is JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === "object") return Object.values(value).every(isJson);
  return false;
}
