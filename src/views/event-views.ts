import { EventStatus } from "../domain/event-status.ts";
import type { AttemptKind, AttemptRecord, EventRecord, ReplayRecord } from "../register/port.ts";

/**
 * How an event, its attempts and its replays look on the wire and on the
 * command line: one shape for the status URL, the admin API and the CLI.
 */

/**
 * Every AttemptKind, as the views, the OpenAPI document and `gateway export`
 * spell them; the Record makes a kind added to the port fail to compile here.
 */
const KIND_TABLE: Record<AttemptKind, true> = { just_in_time: true, ahead: true };
export const ATTEMPT_KINDS: readonly AttemptKind[] = Object.keys(KIND_TABLE) as AttemptKind[];

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
    kind: attempt.kind ?? "just_in_time",
  };
}

/** One replay in an event's audit trail. */
export function replayView(replay: ReplayRecord): Record<string, unknown> {
  return {
    requested_by: replay.requestedBy,
    reason: replay.reason,
    forced: replay.forced,
    from_status: replay.fromStatus,
    requested_at: iso(replay.requestedAt),
  };
}

/** Times on the wire: ISO 8601 in UTC. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
