import { readFileSync } from "node:fs";
import { EventStatus } from "../../domain/event-status.ts";
import { canonicalizeEvent } from "../../domain/fingerprint.ts";
import {
  abandonedSnapshot,
  type OnecOrder,
  ORDERS_PAID_PATH,
  refusalSnapshot,
  statusUrl,
  successSnapshot,
} from "../../domain/first-answer.ts";
import { PROBLEM_TYPE_BASE, type ProblemKind, problems } from "../../errors/catalogue.ts";
import type { AttemptRecord, EventRecord } from "../../register/port.ts";
import { packageFile } from "../../util/package-files.ts";
import { attemptView, statusView } from "../../views/event-views.ts";
import { asJsonObject, parseJsonObject } from "../openapi/json.ts";
import type { JsonObject, JsonValue, RetryExample, RetryStep } from "../openapi/types.ts";

/** Example bodies, made by the functions that make the real answers. */

const EXAMPLE_CORRELATION_ID = "shop-a-100234";
const EXAMPLE_ORDER: OnecOrder = { id: "8023a5b8-5d1e-4c52-9a57-1f2e3d4c5b6a", number: "ORD-000001" };
export const T0 = Date.parse("2026-11-29T12:35:00.000Z");

export interface ExampleData {
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
export function exampleData(event: JsonObject, kinds: Record<string, ProblemKind>): ExampleData {
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
      // One of each kind, so the example shows both.
      kind: n === 1 ? "just_in_time" : "ahead",
    } satisfies AttemptRecord);
  const attempts = [
    asJsonObject(attempt(1, "retryable", 503, "http_503", "1C answered 503: temporarily unavailable"), "attempt"),
    asJsonObject(attempt(2, "delivered", 201, null, EXAMPLE_ORDER.number), "attempt"),
  ];
  const accepted = parseJsonObject(successSnapshot(eventId, EXAMPLE_ORDER).body);
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
  /** One exchange of the worked retry: the sender POSTs `sent`, the gateway answers. */
  const step = (
    title: string,
    explanation: string,
    sent: JsonValue,
    answer: { status: number; headers: Record<string, string>; body: JsonValue },
  ): RetryStep => ({
    title,
    explanation,
    request: {
      method: "POST",
      path: ORDERS_PAID_PATH,
      headers: {
        Authorization: "Bearer <sender token>",
        "Content-Type": "application/json",
        "X-Correlation-ID": EXAMPLE_CORRELATION_ID,
      },
      body: sent,
    },
    response: { ...answer, headers: { "X-Correlation-ID": EXAMPLE_CORRELATION_ID, ...answer.headers } },
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
      body: parseJsonObject(canonical.text),
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
      GW_ERR_ONEC_REJECTED: parseJsonObject(
        refusalSnapshot(
          eventId,
          "GW_ERR_ONEC_REJECTED",
          "1C refused the order: unknown article MUG-010",
          { code: "UNKNOWN_SKU", message: "unknown article MUG-010" },
          EXAMPLE_CORRELATION_ID,
        ).body,
      ),
      GW_ERR_DELIVERY_ABANDONED: parseJsonObject(
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
        step(
          "First send: 202",
          "1C did not answer within SYNC_WAIT_MS. The event is committed and will not be lost; the gateway goes on delivering it.",
          event,
          { status: 202, headers: { Location: location, "Retry-After": "1" }, body: pending(EventStatus.PROCESSING) },
        ),
        step(
          "Resend after Retry-After: 202 again",
          "The attempt failed for a passing reason (1C answered 503); the next one is due in 4 s. No second call to 1C is made while one runs.",
          event,
          {
            status: 202,
            headers: { Location: location, "Retry-After": "4" },
            body: pending(EventStatus.FAILED_RETRYABLE),
          },
        ),
        step(
          "Resend once more: 200, replayed",
          "1C created the order in the meantime. The answer is the first answer's body byte for byte, with 200 and Idempotent-Replayed: true; every later repeat gets the same.",
          event,
          { status: 200, headers: { Location: location, "Idempotent-Replayed": "true" }, body: accepted },
        ),
        step(
          "Another body under the same event_id: 409",
          "Someone edited the order and resent it under the old event_id. A new event needs a new event_id.",
          editedEvent,
          { status: 409, headers: { Location: location }, body: conflict },
        ),
      ],
    },
  };
}

export function problemExample(
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

/** schemas/examples/order-paid.json, the event every example is about. */
export const ORDER_PAID_EXAMPLE = asJsonObject(
  JSON.parse(readFileSync(packageFile("schemas/examples/order-paid.json"), "utf8")),
  "order-paid example",
);

/** Made once: the routes' schemas quote them. */
export const EXAMPLES = exampleData(ORDER_PAID_EXAMPLE, problems);
