import type { EventStatus } from "../domain/event-status.ts";
import type { AttemptRecord, Claim, EventRecord, ReplayRecord } from "./port.ts";

/**
 * The register's rows, defined once: each table's columns in table order with
 * their SQL types, the row type every backend's SQL returns (snake_case, times
 * in epoch ms, flags as 0/1), and the mapping between rows and the port's
 * records. Backends spell their statements from these lists; the schema
 * itself is in each backend's migrations.
 */

/** A column's type as both backends declare it; "?" marks a nullable column; a flag is 0/1 (boolean in PostgreSQL). */
type ColumnType = "text" | "integer" | "bigint" | "flag" | "text?" | "integer?" | "bigint?" | "flag?";
type ValueOf<T> = T extends `${infer Base}?` ? ValueOf<Base> | null : T extends "text" ? string : number;
type RowOf<Columns> = { -readonly [Name in keyof Columns]: ValueOf<Columns[Name]> };

export const EVENT_COLUMNS = {
  sender: "text",
  event_id: "text",
  fingerprint: "text",
  policy_version: "text",
  status: "text",
  correlation_id: "text",
  body: "text",
  response_status: "integer?",
  response_body: "text?",
  order_id: "text?",
  order_number: "text?",
  last_error: "text?",
  last_error_class: "text?",
  attempts: "integer",
  finished_attempts: "integer",
  round_attempts: "integer",
  round_started_at: "bigint",
  lease_owner: "text?",
  lease_token: "bigint",
  lease_until: "bigint?",
  next_attempt_at: "bigint?",
  received_at: "bigint",
  updated_at: "bigint",
} as const satisfies Record<string, ColumnType>;

/** delivery_attempts without its key (id, sender, event_id): what an attempt says. */
export const ATTEMPT_COLUMNS = {
  attempt: "integer",
  lease_token: "bigint",
  worker: "text",
  started_at: "bigint",
  finished_at: "bigint?",
  duration_ms: "integer?",
  outcome: "text?",
  http_status: "integer?",
  error_class: "text?",
  detail: "text?",
  applied: "flag?",
} as const satisfies Record<string, ColumnType>;

/** event_replays without its key (id, sender, event_id). */
export const REPLAY_COLUMNS = {
  requested_by: "text",
  reason: "text",
  forced: "flag",
  from_status: "text",
  requested_at: "bigint",
} as const satisfies Record<string, ColumnType>;

export type EventRow = Omit<RowOf<typeof EVENT_COLUMNS>, "status"> & { status: EventStatus };
export type AttemptRow = RowOf<typeof ATTEMPT_COLUMNS>;
export type ReplayRow = RowOf<typeof REPLAY_COLUMNS>;

/** A table's column names, in table order. */
export function columnNames<Columns extends Record<string, ColumnType>>(columns: Columns): (keyof Columns & string)[] {
  return Object.keys(columns);
}

export function claimOf(row: EventRow): Claim {
  return {
    record: toRecord(row),
    lease: { sender: row.sender, eventId: row.event_id, owner: row.lease_owner ?? "", token: row.lease_token },
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

/** The other way: a record as the row it came from (`gateway export` writes rows, importEvent inserts them). */
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

export function attemptRow(attempt: AttemptRecord): AttemptRow {
  return {
    attempt: attempt.attempt,
    lease_token: attempt.leaseToken,
    worker: attempt.worker,
    started_at: attempt.startedAt,
    finished_at: attempt.finishedAt,
    duration_ms: attempt.durationMs,
    outcome: attempt.outcome,
    http_status: attempt.httpStatus,
    error_class: attempt.errorClass,
    detail: attempt.detail,
    applied: attempt.applied === null ? null : Number(attempt.applied),
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

export function replayRow(replay: ReplayRecord): ReplayRow {
  return {
    requested_by: replay.requestedBy,
    reason: replay.reason,
    forced: Number(replay.forced),
    from_status: replay.fromStatus,
    requested_at: replay.requestedAt,
  };
}
