import type { EventStatus } from "./event-status.ts";
import type { AttemptRecord, Claim, EventRecord, ReplayRecord } from "./port.ts";

/**
 * The register's rows as every backend's SQL returns them (snake_case, times in epoch
 * ms, flags as 0/1), and their shapes in the port's terms.
 */

export interface EventRow {
  sender: string;
  event_id: string;
  fingerprint: string;
  policy_version: string;
  status: EventStatus;
  correlation_id: string;
  body: string;
  response_status: number | null;
  response_body: string | null;
  order_id: string | null;
  order_number: string | null;
  last_error: string | null;
  last_error_class: string | null;
  attempts: number;
  finished_attempts: number;
  round_attempts: number;
  round_started_at: number;
  lease_owner: string | null;
  lease_token: number;
  lease_until: number | null;
  next_attempt_at: number | null;
  received_at: number;
  updated_at: number;
}

export interface AttemptRow {
  attempt: number;
  lease_token: number;
  worker: string;
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  outcome: string | null;
  http_status: number | null;
  error_class: string | null;
  detail: string | null;
  applied: number | null;
}

export interface ReplayRow {
  requested_by: string;
  reason: string;
  forced: number;
  from_status: string;
  requested_at: number;
}

export function claimOf(row: EventRow): Claim {
  return {
    record: toRecord(row),
    lease: { sender: row.sender, eventId: row.event_id, owner: row.lease_owner ?? "", token: row.lease_token },
  };
}

export function toAttempt(row: AttemptRow): AttemptRecord {
  return {
    attempt: row.attempt,
    leaseToken: row.lease_token,
    worker: row.worker,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    outcome: row.outcome,
    httpStatus: row.http_status,
    errorClass: row.error_class,
    detail: row.detail,
    applied: row.applied === null ? null : row.applied === 1,
  };
}

export function toRecord(row: EventRow): EventRecord {
  return {
    sender: row.sender,
    eventId: row.event_id,
    fingerprint: row.fingerprint,
    policyVersion: row.policy_version,
    status: row.status,
    correlationId: row.correlation_id,
    body: row.body,
    response:
      row.response_status === null || row.response_body === null
        ? null
        : { status: row.response_status, body: row.response_body },
    order: row.order_id === null || row.order_number === null ? null : { id: row.order_id, number: row.order_number },
    lastError: row.last_error,
    lastErrorClass: row.last_error_class,
    attempts: row.attempts,
    finishedAttempts: row.finished_attempts,
    roundAttempts: row.round_attempts,
    roundStartedAt: row.round_started_at,
    leaseOwner: row.lease_owner,
    leaseToken: row.lease_token,
    leaseUntil: row.lease_until,
    nextAttemptAt: row.next_attempt_at,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}

export function toReplay(row: ReplayRow): ReplayRecord {
  return {
    requestedBy: row.requested_by,
    reason: row.reason,
    forced: row.forced === 1,
    fromStatus: row.from_status,
    requestedAt: row.requested_at,
  };
}

/** The other way: a record as the row it came from (for `gateway export`, which writes rows). */
export function toRow(record: EventRecord): EventRow {
  return {
    sender: record.sender,
    event_id: record.eventId,
    fingerprint: record.fingerprint,
    policy_version: record.policyVersion,
    status: record.status,
    correlation_id: record.correlationId,
    body: record.body,
    response_status: record.response?.status ?? null,
    response_body: record.response?.body ?? null,
    order_id: record.order?.id ?? null,
    order_number: record.order?.number ?? null,
    last_error: record.lastError,
    last_error_class: record.lastErrorClass,
    attempts: record.attempts,
    finished_attempts: record.finishedAttempts,
    round_attempts: record.roundAttempts,
    round_started_at: record.roundStartedAt,
    lease_owner: record.leaseOwner,
    lease_token: record.leaseToken,
    lease_until: record.leaseUntil,
    next_attempt_at: record.nextAttemptAt,
    received_at: record.receivedAt,
    updated_at: record.updatedAt,
  };
}
