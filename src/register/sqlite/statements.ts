import type Database from "better-sqlite3";
import { EventStatus } from "../event-status.ts";
import type { ListFilter, PageCursor, Settlement } from "../port.ts";
import type { AttemptRow, EventRow, ReplayRow } from "../rows.ts";

/** Every SQL statement of the register, prepared once per connection. */

type Statement<R> = Database.Statement<unknown[], R>;

const PENDING = `status IN ('PROCESSING','FAILED_RETRYABLE')`;
const DUE = `${PENDING} AND (lease_until IS NULL OR lease_until <= @now) AND next_attempt_at <= @now`;
// Named index: a statement the planner cannot serve from it fails to prepare instead of scanning the table.
const FINISHED_BEFORE = `inbound_events INDEXED BY inbound_events_by_status
  WHERE status IN ('SUCCEEDED','FAILED_FINAL') AND updated_at < @olderThan`;

/**
 * The console's search: every key compared for equality with one term, each
 * served by its own index (migration 2) through SQLite's MULTI-INDEX OR, then
 * the few matches sorted. The json_extract expressions must stay exactly those
 * of the indexes, or the search scans the table. Exported for the plan's test.
 */
export const SEARCH_SQL = `
  SELECT * FROM inbound_events
   WHERE event_id = @term OR correlation_id = @term OR order_id = @term OR order_number = @term
      OR json_extract(body, '$.order.id') = @term OR json_extract(body, '$.order.number') = @term
   ORDER BY received_at DESC, sender, event_id LIMIT @limit`;

export type Statements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: Database.Database) {
  const fenced = `WHERE sender = @sender AND event_id = @eventId AND lease_token = @token AND ${PENDING}
                  RETURNING *`;
  const released = "lease_owner = NULL, lease_until = NULL, finished_attempts = finished_attempts + 1";
  return {
    insert: db.prepare(`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  round_started_at, next_attempt_at, received_at, updated_at)
      VALUES (@sender, @eventId, @fingerprint, @policyVersion, 'PROCESSING', @correlationId, @body,
              @now, @now, @now, @now)
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *`) as Statement<EventRow>,
    select: db.prepare("SELECT * FROM inbound_events WHERE sender = ? AND event_id = ?") as Statement<EventRow>,
    // Named index: the planner otherwise takes the status index and sorts every pending row on each claim.
    selectDue: db.prepare(`
      SELECT * FROM inbound_events INDEXED BY inbound_events_due WHERE ${DUE}
       ORDER BY next_attempt_at, received_at LIMIT @limit`) as Statement<EventRow>,
    selectDueOne: db.prepare(`
      SELECT * FROM inbound_events WHERE sender = @sender AND event_id = @eventId AND ${DUE}`) as Statement<EventRow>,
    claim: db.prepare(`
      UPDATE inbound_events
         SET status = 'PROCESSING', attempts = attempts + 1, round_attempts = round_attempts + 1,
             lease_owner = @owner, lease_token = lease_token + 1, lease_until = @leaseUntil, updated_at = @now
       WHERE sender = @sender AND event_id = @eventId AND ${DUE}
      RETURNING *`) as Statement<EventRow>,
    settleSucceeded: db.prepare(`
      UPDATE inbound_events
         SET status = 'SUCCEEDED', order_id = @orderId, order_number = @orderNumber,
             response_status = @responseStatus, response_body = @responseBody,
             last_error = NULL, last_error_class = NULL, next_attempt_at = NULL, ${released}, updated_at = @now
       ${fenced}`) as Statement<EventRow>,
    settleFinal: db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_FINAL', last_error = @error, last_error_class = @errorClass,
             response_status = @responseStatus, response_body = @responseBody,
             next_attempt_at = NULL, ${released}, updated_at = @now
       ${fenced}`) as Statement<EventRow>,
    settleRetryable: db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_RETRYABLE', last_error = @error, last_error_class = @errorClass,
             next_attempt_at = @nextAttemptAt, round_attempts = round_attempts - @refund, ${released},
             updated_at = @now
       ${fenced}`) as Statement<EventRow>,
    bringForward: db.prepare(`
      UPDATE inbound_events SET next_attempt_at = @now, updated_at = @now
       WHERE status = 'FAILED_RETRYABLE' AND next_attempt_at > @now AND (lease_until IS NULL OR lease_until <= @now)`),
    insertAttempt: db.prepare(`
      INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at)
      VALUES (@sender, @eventId, @attempt, @leaseToken, @worker, @startedAt)`),
    finishAttempt: db.prepare(`
      UPDATE delivery_attempts
         SET finished_at = @finishedAt, duration_ms = @durationMs, outcome = @outcome, http_status = @httpStatus,
             error_class = @errorClass, detail = @detail, applied = @applied
       WHERE sender = @sender AND event_id = @eventId AND lease_token = @token`),
    selectAttempts: db.prepare(`
      SELECT attempt, lease_token, worker, started_at, finished_at, duration_ms, outcome, http_status,
             error_class, detail, applied
        FROM delivery_attempts WHERE sender = ? AND event_id = ? ORDER BY lease_token`) as Statement<AttemptRow>,
    replay: db.prepare(`
      UPDATE inbound_events
         SET status = 'PROCESSING', next_attempt_at = @now, round_attempts = 0, round_started_at = @now,
             finished_attempts = attempts, response_status = NULL, response_body = NULL,
             last_error = NULL, last_error_class = NULL,
             lease_owner = NULL, lease_until = NULL, updated_at = @now
       WHERE sender = @sender AND event_id = @eventId
      RETURNING *`) as Statement<EventRow>,
    insertReplay: db.prepare(`
      INSERT INTO event_replays (sender, event_id, requested_by, reason, forced, from_status, requested_at)
      VALUES (@sender, @eventId, @requestedBy, @reason, @forced, @fromStatus, @requestedAt)`),
    backlog: db.prepare(`
      SELECT (SELECT count(*) FROM inbound_events WHERE ${PENDING}) AS pending,
             (SELECT min(received_at) FROM inbound_events WHERE ${PENDING}) AS oldest,
             (SELECT count(*) FROM inbound_events WHERE status = 'FAILED_FINAL') AS failed_final`) as Statement<{
      pending: number;
      oldest: number | null;
      failed_final: number;
    }>,
    selectByEventId: db.prepare(
      "SELECT * FROM inbound_events WHERE event_id = ? ORDER BY sender",
    ) as Statement<EventRow>,
    selectReplays: db.prepare(`
      SELECT requested_by, reason, forced, from_status, requested_at FROM event_replays
       WHERE sender = ? AND event_id = ? ORDER BY id`) as Statement<ReplayRow>,
    page: db.prepare(`
      SELECT * FROM inbound_events
       WHERE (@sender IS NULL OR sender = @sender) AND (@status IS NULL OR status = @status)
         AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at <= @until)
         AND (@beforeAt IS NULL OR (received_at, sender, event_id) < (@beforeAt, @beforeSender, @beforeId))
       ORDER BY received_at DESC, sender DESC, event_id DESC LIMIT @limit`) as Statement<EventRow>,
    list: db.prepare(`
      SELECT * FROM inbound_events
       WHERE (@sender IS NULL OR sender = @sender) AND (@status IS NULL OR status = @status)
         AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at <= @until)
       ORDER BY received_at, event_id LIMIT @limit`) as Statement<EventRow>,
    // SQLite's DELETE … LIMIT needs a compile-time flag; a rowid subquery works everywhere.
    purge: db.prepare(`
      DELETE FROM inbound_events WHERE rowid IN (SELECT rowid FROM ${FINISHED_BEFORE} LIMIT @limit)`),
    countFinished: db.prepare(`SELECT count(*) AS count FROM ${FINISHED_BEFORE}`) as Statement<{ count: number }>,
    countByStatus: db.prepare(`
      SELECT status, count(*) AS count FROM inbound_events
       WHERE (@sender IS NULL OR sender = @sender)
         AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at <= @until)
       GROUP BY status`) as Statement<{ status: string; count: number }>,
    search: db.prepare(SEARCH_SQL) as Statement<EventRow>,
  };
}

export function settleStatement(
  sql: Statements,
  key: { sender: string; eventId: string; token: number; now: number },
  settlement: Settlement,
): EventRow | undefined {
  switch (settlement.status) {
    case EventStatus.SUCCEEDED:
      return sql.settleSucceeded.get({
        ...key,
        orderId: settlement.order.id,
        orderNumber: settlement.order.number,
        responseStatus: settlement.response.status,
        responseBody: settlement.response.body,
      });
    case EventStatus.FAILED_FINAL:
      return sql.settleFinal.get({
        ...key,
        error: settlement.error,
        errorClass: settlement.errorClass,
        responseStatus: settlement.response.status,
        responseBody: settlement.response.body,
      });
    case EventStatus.FAILED_RETRYABLE:
      return sql.settleRetryable.get({
        ...key,
        error: settlement.error,
        errorClass: settlement.errorClass,
        nextAttemptAt: settlement.nextAttemptAt,
        refund: settlement.charged ? 0 : 1,
      });
  }
}

/** The bounds of `list` and `page` as named parameters; SQL reads NULL as "no bound". */
export function filterParams(filter: ListFilter & { before?: PageCursor }) {
  return {
    sender: filter.sender ?? null,
    status: filter.status ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
    limit: filter.limit,
    beforeAt: filter.before?.receivedAt ?? null,
    beforeSender: filter.before?.sender ?? "",
    beforeId: filter.before?.eventId ?? "",
  };
}
