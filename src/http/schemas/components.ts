import { ALL_STATUSES, EventStatus } from "../../domain/event-status.ts";
import { orderPaidSchema } from "../../domain/validate-order-paid.ts";
import { PROBLEM_TYPE_BASE, type ProblemKind, problems } from "../../errors/catalogue.ts";
import { ATTEMPT_KINDS } from "../../views/event-views.ts";
import { asJsonObject, defComponentName, schemaRef } from "../openapi/json.ts";
import type { JsonObject, JsonValue } from "../openapi/types.ts";

/**
 * The document's components/schemas, which the routes' response schemas
 * `$ref`: the order-paid schema hoisted from `$defs` (the very object the
 * validator compiled), the answer views, one schema per problem type.
 */
export function componentSchemas(kinds: Readonly<Record<string, ProblemKind>> = problems): Record<string, JsonObject> {
  const orderPaid = hoistDefs(asJsonObject(structuredClone(orderPaidSchema), "order-paid schema"));
  const schemas: Record<string, JsonObject> = {};
  const add = (name: string, schema: JsonObject) => {
    if (name in schemas) throw new Error(`two component schemas named ${name}`);
    schemas[name] = schema;
  };
  add("OrderPaidEvent", orderPaid.root);
  for (const [name, schema] of Object.entries(orderPaid.defs)) add(name, schema);
  for (const [name, schema] of Object.entries(viewSchemas(kinds))) add(name, schema);
  for (const [code, kind] of Object.entries(kinds)) add(code, problemSchema(code, kind));
  return schemas;
}

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

/** An object whose every property is required, as most of the answers' bodies are. */
function allRequired(properties: JsonObject, extra: JsonObject = {}): JsonObject {
  return { type: "object", required: Object.keys(properties), properties, ...extra };
}

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

function viewSchemas(kinds: Readonly<Record<string, ProblemKind>>): Record<string, JsonObject> {
  return {
    EventStatus: {
      type: "string",
      enum: [...ALL_STATUSES],
      description:
        "`PROCESSING`: recorded; an attempt runs or is due. `FAILED_RETRYABLE`: the last attempt failed for a passing reason; another follows at `next_attempt_at`. `SUCCEEDED`: 1C has the order. `FAILED_FINAL`: 1C refused it, or the gateway gave up.",
    },
    OnecOrder: allRequired(
      { id: { type: "string" }, number: { type: "string" } },
      { description: "The order 1C made for the event." },
    ),
    OrderAccepted: allRequired(
      {
        event_id: schemaRef("EventId"),
        status: { const: EventStatus.SUCCEEDED },
        order: schemaRef("OnecOrder"),
        status_url: { type: "string", format: "uri-reference" },
      },
      { description: "1C has the order. A repeat gets these very bytes again, with 200." },
    ),
    EventPending: allRequired(
      {
        event_id: schemaRef("EventId"),
        status: { enum: [EventStatus.PROCESSING, EventStatus.FAILED_RETRYABLE] },
        status_url: { type: "string", format: "uri-reference" },
      },
      { description: "Recorded durably, not delivered yet. Resend after Retry-After, or poll status_url." },
    ),
    EventStatusView: allRequired(statusViewProperties, { description: "The status URL's answer." }),
    AttemptView: allRequired({
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
      kind: {
        enum: [...ATTEMPT_KINDS],
        description:
          "How the attempt was claimed. `just_in_time`: for a free call slot, and called at once. `ahead`: claimed in advance and kept ready until a slot freed. An unfinished `ahead` attempt whose process stopped may never have reached 1C: the `crash_loop` rule does not count it (at most one per event), and the event is not claimed ahead again.",
      },
    }),
    AttemptsView: allRequired(
      {
        event_id: schemaRef("EventId"),
        status: schemaRef("EventStatus"),
        attempts: { type: "array", items: schemaRef("AttemptView") },
      },
      { description: "Every attempt to deliver the event to 1C, kept for good." },
    ),
    ProblemFieldError: allRequired({
      path: { type: "string", description: "JSON Pointer into the request body." },
      rule: { type: "string", description: "The schema keyword or business rule that refused it." },
      message: { type: "string" },
    }),
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
        onec_error: allRequired(
          { code: { type: "string" }, message: { type: "string" } },
          { description: "onec-rejected and onec-conflict: what 1C said." },
        ),
      },
      description: "RFC 9457 problem details with the gateway's extension members.",
    },
    ProblemTypeDescription: allRequired({
      code: { type: "string" },
      status: { type: "integer" },
      slug: { type: "string" },
      title: { type: "string" },
      retryable: { type: "boolean" },
    }),
    Health: { type: "object", required: ["status"], properties: { status: { const: "ok" } } },
    Readiness: { type: "object", required: ["status"], properties: { status: { const: "ready" } } },
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
        // allOf: @fastify/swagger drops the siblings of a $ref, and the description with them.
        body: {
          type: "object",
          description:
            "The accepted event (an OrderPaidEvent), as delivered to 1C; for a viewer, e-mail and phone are masked (`a***@example.com`, `+*********67`), so there it no longer matches the event's own patterns.",
        },
        fingerprint: { type: "string" },
        policy_version: { type: "string" },
        lease: {
          oneOf: [
            allRequired({ owner: nullable("string"), until: dateTime }, { description: "The attempt running now." }),
            { type: "null" },
          ],
        },
        response: {
          oneOf: [
            allRequired(
              { status: { type: "integer" }, body: { type: "string" } },
              { description: "The recorded final answer that every repeat gets, byte for byte." },
            ),
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
    ReplayRecord: allRequired(
      {
        requested_by: { type: "string" },
        reason: { type: "string" },
        forced: { type: "boolean" },
        from_status: schemaRef("EventStatus"),
        requested_at: dateTime,
      },
      { description: "Who replayed the event, when and why." },
    ),
    AdminEventList: allRequired({
      events: { type: "array", items: schemaRef("AdminEventView") },
      next_cursor: nullable("string", { description: "Pass as `cursor` for the next page; null on the last." }),
    }),
  };
}

export function problemSchema(code: string, kind: ProblemKind): JsonObject {
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
