import { type ProblemCode, problems } from "../errors/catalogue.ts";
import { PROBLEM_CONTENT_TYPE, problemDocument } from "../errors/problem.ts";
import { EventStatus } from "../register/event-status.ts";
import type { AttemptRecord, EventRecord, OnecOrder, ResponseSnapshot } from "../register/port.ts";

/**
 * The one place that maps a recorded event to the HTTP answer a sender gets.
 *
 * | register state                          | first answer                  | any later answer            |
 * |-----------------------------------------|-------------------------------|-----------------------------|
 * | other fingerprint under the same id     | 409 event-id-conflict         | 409 (checked before 202)    |
 * | SUCCEEDED                               | 201 + snapshot                | 200 + the same bytes        |
 * | FAILED_FINAL (1C refused)               | 422 + snapshot                | 422 + the same bytes        |
 * | FAILED_FINAL (gateway gave up)          | 502 + snapshot                | 502 + the same bytes        |
 * | PROCESSING / FAILED_RETRYABLE           | 202 + status URL, Retry-After | 202                         |
 *
 * The first answer goes only to the request that recorded the event. Every
 * answer carries Location (the status URL); finished ones carry
 * Idempotent-Replayed: false on the first answer and true on repeats.
 * Refusals before anything is recorded are problems from the catalogue.
 */
export interface Answer {
  status: number;
  contentType: string;
  headers: Record<string, string>;
  body: string;
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
export const ORDERS_PAID_PATH = "/integration/v1/orders/paid";

export function statusUrl(eventId: string): string {
  return `${ORDERS_PAID_PATH}/${encodeURIComponent(eventId)}`;
}

export type AcceptResult =
  /** The same event_id was recorded with another body. */
  | { kind: "conflict"; record: EventRecord }
  /** The recorded event; `firstAnswer` is true for the request that drove it to its end. */
  | { kind: "event"; record: EventRecord; firstAnswer: boolean };

export function answerFor(result: AcceptResult, correlationId: string, now: number): Answer {
  const { record } = result;
  const location = statusUrl(record.eventId);
  if (result.kind === "conflict") {
    return problemAnswer("GW_ERR_EVENT_ID_CONFLICT", correlationId, {
      detail: `event_id "${record.eventId}" was accepted at ${new Date(record.receivedAt).toISOString()} with another body; send a new event_id for a new event`,
      event_id: record.eventId,
      status_url: location,
    });
  }
  if (
    record.response !== null &&
    (record.status === EventStatus.SUCCEEDED || record.status === EventStatus.FAILED_FINAL)
  ) {
    const replayed = !result.firstAnswer;
    const status = record.status === EventStatus.SUCCEEDED && replayed ? 200 : record.response.status;
    return {
      status,
      contentType: record.status === EventStatus.SUCCEEDED ? JSON_CONTENT_TYPE : PROBLEM_CONTENT_TYPE,
      headers: { location, "idempotent-replayed": String(replayed) },
      body: record.response.body,
    };
  }
  return {
    status: 202,
    contentType: JSON_CONTENT_TYPE,
    headers: { location, "retry-after": String(retryAfterSeconds(record, now)) },
    body: JSON.stringify({ event_id: record.eventId, status: record.status, status_url: location }),
  };
}

/** When a sender should look again: at the next attempt, or in a second while one runs. */
export function retryAfterSeconds(record: EventRecord, now: number): number {
  if (record.nextAttemptAt !== null && record.leaseUntil === null) {
    return Math.max(1, Math.ceil((record.nextAttemptAt - now) / 1000));
  }
  return 1;
}

/** The first answer for a delivered event, stored and replayed byte for byte. */
export function successSnapshot(eventId: string, order: OnecOrder): ResponseSnapshot {
  return {
    status: 201,
    body: JSON.stringify({
      event_id: eventId,
      status: EventStatus.SUCCEEDED,
      order: { id: order.id, number: order.number },
      status_url: statusUrl(eventId),
    }),
  };
}

/** The first answer for an event 1C refused, stored and replayed byte for byte. */
export function refusalSnapshot(
  eventId: string,
  code: "GW_ERR_ONEC_REJECTED" | "GW_ERR_ONEC_CONFLICT",
  detail: string,
  onecError: { code: string; message: string },
  correlationId: string,
): ResponseSnapshot {
  const doc = problemDocument(code, detail, correlationId, { event_id: eventId, status_url: statusUrl(eventId) });
  return { status: problems[code].status, body: JSON.stringify({ ...doc, onec_error: onecError }) };
}

/** The answer for an event the gateway gave up on: support replays it once the cause is fixed. */
export function abandonedSnapshot(
  eventId: string,
  reason: string,
  why: string,
  correlationId: string,
): ResponseSnapshot {
  const doc = problemDocument(
    "GW_ERR_DELIVERY_ABANDONED",
    `delivery to 1C was abandoned (${reason}): ${why}. Do not resend; support can replay it.`,
    correlationId,
    { event_id: eventId, status_url: statusUrl(eventId) },
  );
  return { status: doc.status, body: JSON.stringify(doc) };
}

export interface ProblemAnswerOptions {
  detail: string;
  event_id?: string;
  status_url?: string;
  errors?: readonly { path: string; rule: string; message: string }[];
  retryAfterSeconds?: number;
  /** A 415 for a content coding says which codings the gateway reads. */
  acceptEncoding?: string;
  instance?: string;
}

export function problemAnswer(code: ProblemCode, correlationId: string, options: ProblemAnswerOptions): Answer {
  const { detail, retryAfterSeconds: retryAfter, acceptEncoding, ...extras } = options;
  const doc = problemDocument(code, detail, correlationId, extras);
  const headers: Record<string, string> = {};
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  if (acceptEncoding !== undefined) headers["accept-encoding"] = acceptEncoding;
  if (options.status_url !== undefined) headers.location = options.status_url;
  return { status: doc.status, contentType: PROBLEM_CONTENT_TYPE, headers, body: JSON.stringify(doc) };
}

/** The status resource: what an administrator or a sender sees when polling. */
export function statusView(record: EventRecord): Record<string, unknown> {
  const pending = record.status === EventStatus.PROCESSING || record.status === EventStatus.FAILED_RETRYABLE;
  return {
    event_id: record.eventId,
    status: record.status,
    attempts: record.attempts,
    order: record.order,
    error: record.lastError,
    error_class: record.lastErrorClass,
    next_attempt_at: pending && record.nextAttemptAt !== null ? iso(record.nextAttemptAt) : null,
    received_at: iso(record.receivedAt),
    updated_at: iso(record.updatedAt),
    correlation_id: record.correlationId,
  };
}

/** One line of `GET {status_url}/attempts`. */
export function attemptView(attempt: AttemptRecord): Record<string, unknown> {
  return {
    attempt: attempt.attempt,
    started_at: iso(attempt.startedAt),
    finished_at: attempt.finishedAt === null ? null : iso(attempt.finishedAt),
    duration_ms: attempt.durationMs,
    outcome: attempt.outcome ?? "unfinished",
    http_status: attempt.httpStatus,
    error_class: attempt.errorClass,
    detail: attempt.detail,
    worker: attempt.worker,
    applied: attempt.applied,
  };
}

/** Times on the wire: ISO 8601 in UTC. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
