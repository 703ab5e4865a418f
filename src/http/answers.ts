import type { AcceptResult } from "../accept/accept-result.ts";
import { EventStatus } from "../domain/event-status.ts";
import { statusUrl } from "../domain/first-answer.ts";
import type { ProblemCode } from "../errors/catalogue.ts";
import { PROBLEM_CONTENT_TYPE, problemDocument } from "../errors/problem.ts";
import type { EventRecord } from "../register/port.ts";

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

export interface ProblemAnswerOptions {
  detail: string;
  event_id?: string;
  status_url?: string;
  errors?: readonly { path: string; rule: string; message: string }[];
  retryAfterSeconds?: number;
  /** A 415 for a content coding says which codings the gateway reads. */
  acceptEncoding?: string;
  /** A 405 says which methods the URL takes (RFC 9110 §15.5.6). */
  allow?: string;
  instance?: string;
}

export function problemAnswer(code: ProblemCode, correlationId: string, options: ProblemAnswerOptions): Answer {
  const { detail, retryAfterSeconds: retryAfter, acceptEncoding, allow, ...extras } = options;
  const doc = problemDocument(code, detail, correlationId, extras);
  const headers: Record<string, string> = {};
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  if (acceptEncoding !== undefined) headers["accept-encoding"] = acceptEncoding;
  if (allow !== undefined) headers.allow = allow;
  if (options.status_url !== undefined) headers.location = options.status_url;
  return { status: doc.status, contentType: PROBLEM_CONTENT_TYPE, headers, body: JSON.stringify(doc) };
}
