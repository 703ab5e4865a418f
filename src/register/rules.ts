import { EventStatus, PENDING_STATUSES } from "../domain/event-status.ts";
import type {
  AttemptKind,
  AttemptReport,
  ClaimRequest,
  EventSnapshot,
  PurgeBound,
  Release,
  ReplayRefusal,
  ReplayRequest,
  Settlement,
} from "./port.ts";
import {
  type AttemptRow,
  acceptedSourceRow,
  attemptRow,
  type EventRow,
  type NewSourceRow,
  type ReplayRow,
  replayRow,
  type SearchKeyColumns,
  storableText,
  toRow,
} from "./rows.ts";

/**
 * The rules every backend shares, once: the pending statuses
 * (domain/event-status.ts) as SQL and the ones a purge takes, what settling and replaying write over
 * an event, when a replay is refused, what an import keeps. Pure functions on rows; each backend calls
 * them from its own statements, in its own transactions.
 */

/** `status IN (…)` as literal SQL: partial indexes (inbound_events_due) are chosen only for a literal list. */
export const PENDING_SQL = `status IN (${PENDING_STATUSES.map((status) => `'${status}'`).join(",")})`;

/**
 * The statuses a purge takes (port.ts, PurgeBound), as the two values of a
 * backend's `status IN (?, ?)`: SUCCEEDED always, FAILED_FINAL only when
 * asked. NULL matches nothing, so one statement serves both.
 */
export function purgeableStatuses(bound: PurgeBound): [EventStatus, EventStatus | null] {
  return [EventStatus.SUCCEEDED, bound.includeFailed === true ? EventStatus.FAILED_FINAL : null];
}

/**
 * What a claim of kind "ahead" adds to due (port.ts, AttemptKind), in two
 * parts: every attempt since the last replay finished (allFinishedSql), and
 * no attempt claimed ahead was ever left unfinished (noLostAheadSql). So an
 * event gets at most one ahead attempt the poison rule does not count
 * (planAttempt), and one whose calls died is claimed only when a slot is free
 * for it. The second part's subquery is served by delivery_attempts'
 * (sender, event_id, lease_token) key.
 */
export function allFinishedSql(row: string): string {
  return `${row}.attempts = ${row}.finished_attempts`;
}

/**
 * No attempt of the event `row` names (a table or its alias, with sender,
 * event_id and attempts) was claimed ahead and left unfinished. An event never
 * claimed has none to look up: the common case costs no subquery.
 */
export function noLostAheadSql(row: string): string {
  return `(${row}.attempts = 0 OR NOT EXISTS (SELECT 1 FROM delivery_attempts lost
                       WHERE lost.sender = ${row}.sender AND lost.event_id = ${row}.event_id
                         AND lost.kind = 'ahead' AND lost.finished_at IS NULL))`;
}

/** A claim's attempts' kind: a claim of one event is for a caller waiting on it, always just in time. */
export function claimKind(request: ClaimRequest): AttemptKind {
  return request.only === undefined ? (request.kind ?? "just_in_time") : "just_in_time";
}

/**
 * What a release (port.ts, Release) writes over its event, under the fence:
 * the claim undone. The status comes back from last_error: an event claimed
 * ahead had no attempt die (allFinishedSql), so it was FAILED_RETRYABLE exactly
 * when an outcome had left it an error, PROCESSING when new or replayed.
 * Its attempt row is deleted with it.
 */
export const RELEASED_SET = `status = CASE WHEN last_error IS NULL THEN 'PROCESSING' ELSE 'FAILED_RETRYABLE' END,
       attempts = attempts - 1, round_attempts = round_attempts - 1, lease_owner = NULL, lease_until = NULL`;

export function isRelease(settlement: Settlement): settlement is Release {
  return settlement.status === EventStatus.PROCESSING;
}

/** An outcome: a settlement that is not a release. */
export type Outcome = Exclude<Settlement, Release>;

/** The columns an outcome writes over its event; the lease's release (settleReleases) comes with every one. */
export type SettledColumns = Pick<EventRow, "status" | "next_attempt_at"> &
  Partial<
    Pick<
      EventRow,
      "order_id" | "order_number" | "response_status" | "response_body" | "last_error" | "last_error_class"
    >
  >;

/**
 * What settling writes. Only under the newest lease (the fence: lease_token
 * equals the settler's and the event is still pending); the attempt's own row
 * is written either way, with `applied` saying whether the outcome landed.
 */
export function settledColumns(settlement: Outcome): SettledColumns {
  switch (settlement.status) {
    case EventStatus.SUCCEEDED:
      return {
        status: settlement.status,
        order_id: storableText(settlement.order.id),
        order_number: storableText(settlement.order.number),
        response_status: settlement.response.status,
        response_body: storableText(settlement.response.body),
        last_error: null,
        last_error_class: null,
        next_attempt_at: null,
      };
    case EventStatus.FAILED_FINAL:
      return {
        status: settlement.status,
        last_error: storableText(settlement.error),
        last_error_class: settlement.errorClass,
        response_status: settlement.response.status,
        response_body: storableText(settlement.response.body),
        next_attempt_at: null,
      };
    case EventStatus.FAILED_RETRYABLE:
      return {
        status: settlement.status,
        last_error: storableText(settlement.error),
        last_error_class: settlement.errorClass,
        next_attempt_at: settlement.nextAttemptAt,
      };
  }
}

/**
 * What every settle does besides its outcome's columns: the lease is released,
 * the attempt counts as finished, and an attempt the event is not to blame for
 * (bad credentials: `charged` false) is given back to its budget.
 */
export function settleReleases(settlement: Outcome): { refund: 0 | 1 } {
  return { refund: settlement.status === EventStatus.FAILED_RETRYABLE && !settlement.charged ? 1 : 0 };
}

/** What a settle writes into the attempt's own row; what the report leaves out is null. */
export function finishedAttempt(report: AttemptReport) {
  return {
    durationMs: report.durationMs,
    outcome: report.outcome,
    httpStatus: report.httpStatus ?? null,
    errorClass: report.errorClass ?? null,
    detail: report.detail === undefined ? null : storableText(report.detail),
  };
}

/**
 * Why a replay is refused, if it is: an event no longer in the status it was
 * chosen by, a SUCCEEDED event only with force (1C already has the order),
 * and never while an attempt holds a live lease. `now` is the clock the
 * backend stamps leases with.
 */
export function replayRefusal(
  row: EventRow,
  request: Pick<ReplayRequest, "force" | "expectedStatus">,
  now: number,
): ReplayRefusal | undefined {
  if (request.expectedStatus !== undefined && row.status !== request.expectedStatus) return "changed";
  if (row.status === EventStatus.SUCCEEDED && !request.force) return "succeeded";
  if (row.lease_until !== null && row.lease_until > now) return "in_flight";
  return undefined;
}

/**
 * What a replay writes: due now, a fresh round and budget, no outcome, no lease. Attempts so far count as
 * finished. The fencing token moves on, as a claim moves it: an attempt whose lease ran out before the
 * replay may still be running, and its outcome must not land on the new round.
 */
export function replayedColumns(row: EventRow, now: number) {
  return {
    lease_token: row.lease_token + 1,
    status: EventStatus.PROCESSING,
    next_attempt_at: now,
    round_attempts: 0,
    round_started_at: now,
    finished_attempts: row.attempts,
    response_status: null,
    response_body: null,
    last_error: null,
    last_error_class: null,
    lease_owner: null,
    lease_until: null,
    updated_at: now,
  };
}

/** The audit row of a replay: who asked, why, and what the event was before. */
export function replayAudit(request: ReplayRequest, row: EventRow, now: number): ReplayRow {
  return replayRow({
    requestedBy: request.requestedBy,
    reason: request.reason,
    forced: request.force,
    fromStatus: row.status,
    requestedAt: now,
  });
}

/** The rows importEvent writes, one transaction together. */
export interface ImportRows {
  event: EventRow & SearchKeyColumns;
  attempts: AttemptRow[];
  replays: ReplayRow[];
  /** The delivery the event was accepted from, if it came from a platform: inserted only with the event. */
  source: NewSourceRow | null;
}

/**
 * An event as another register held it, as rows. The lease is not carried
 * over (its holder worked on the old register), so a pending event can be
 * claimed as soon as it is due; its token is, so every later claim's token is
 * higher than any before.
 */
export function importRows(snapshot: EventSnapshot): ImportRows {
  return {
    event: { ...toRow(snapshot.record), lease_owner: null, lease_until: null, ...searchKeysOf(snapshot.record.body) },
    attempts: snapshot.attempts.map(attemptRow),
    replays: snapshot.replays.map(replayRow),
    source: sourceOf(snapshot),
  };
}

/**
 * The search keys of a body read back (an import): what a reservation was
 * given for it, the event's order.id and order.number. Null where the body
 * has none as a string: a register's body is the canonical event, but an
 * export file is text anyone may have edited.
 */
export function searchKeysOf(body: string): SearchKeyColumns {
  let order: unknown;
  try {
    order = (JSON.parse(body) as { order?: unknown } | null)?.order;
  } catch {
    order = undefined;
  }
  const key = (name: "id" | "number") => {
    const value = typeof order === "object" && order !== null ? (order as Record<string, unknown>)[name] : undefined;
    return typeof value === "string" ? value : null;
  };
  return { site_order_id: key("id"), site_order_number: key("number") };
}

function sourceOf({ record, source }: EventSnapshot): NewSourceRow | null {
  return source === undefined ? null : acceptedSourceRow({ sender: record.sender, eventId: record.eventId, source });
}

/** Longer than any key the search matches (event_id and correlation ids stop at 128 characters). */
export const MAX_SEARCH_TERM = 256;

/**
 * How many rows a search may return; 0 when the term cannot match anything,
 * so that no backend asks its database.
 */
export function searchRows(term: string, limit: number): number {
  // No stored key holds U+0000 (the gateway refuses it), and PostgreSQL refuses it in a query.
  if (term.length === 0 || term.length > MAX_SEARCH_TERM || term.includes("\u0000") || !(limit >= 1)) return 0;
  return Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER);
}
