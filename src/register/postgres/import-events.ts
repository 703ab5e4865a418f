import type { EventSnapshot } from "../port.ts";
import type { EventRow } from "../rows.ts";
import type { Db } from "./statements.ts";

/**
 * The SQL of importEvent (`gateway import`): one event's row, attempts and
 * replays, written as another register held them, in one statement (so one
 * transaction). The attempts and replays travel as one JSON parameter each,
 * typed by the column list of json_to_recordset: any number of them, no
 * parameter limit, no type left to guesswork.
 */

/** Returns the new row, or undefined when (sender, event_id) was already there: then nothing is written. */
export async function importSnapshot(db: Db, snapshot: EventSnapshot): Promise<EventRow | undefined> {
  const { record } = snapshot;
  const attempts = snapshot.attempts.map((a) => ({
    attempt: a.attempt,
    lease_token: a.leaseToken,
    worker: a.worker,
    started_at: a.startedAt,
    finished_at: a.finishedAt,
    duration_ms: a.durationMs,
    outcome: a.outcome,
    http_status: a.httpStatus,
    error_class: a.errorClass,
    detail: a.detail,
    applied: a.applied,
  }));
  const replays = snapshot.replays.map((r) => ({
    requested_by: r.requestedBy,
    reason: r.reason,
    forced: r.forced,
    from_status: r.fromStatus,
    requested_at: r.requestedAt,
  }));
  // No lease: its holder worked on the old register. The token stays, so fencing keeps growing.
  // The attempts and replays join the inserted row: on a conflict there is none, and they go nowhere.
  const rows = await db<EventRow[]>`
    WITH event AS (
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  response_status, response_body, order_id, order_number, last_error,
                                  last_error_class, attempts, finished_attempts, round_attempts, round_started_at,
                                  lease_owner, lease_token, lease_until, next_attempt_at, received_at, updated_at)
      VALUES (${record.sender}, ${record.eventId}, ${record.fingerprint}, ${record.policyVersion}, ${record.status},
              ${record.correlationId}, ${record.body}, ${record.response?.status ?? null}::integer,
              ${record.response?.body ?? null}::text, ${record.order?.id ?? null}::text,
              ${record.order?.number ?? null}::text, ${record.lastError}::text, ${record.lastErrorClass}::text,
              ${record.attempts}, ${record.finishedAttempts}, ${record.roundAttempts}, ${record.roundStartedAt},
              NULL, ${record.leaseToken}, NULL, ${record.nextAttemptAt}::bigint, ${record.receivedAt},
              ${record.updatedAt})
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *),
    attempts AS (
      INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at, finished_at,
                                     duration_ms, outcome, http_status, error_class, detail, applied)
      SELECT event.sender, event.event_id, a.attempt, a.lease_token, a.worker, a.started_at, a.finished_at,
             a.duration_ms, a.outcome, a.http_status, a.error_class, a.detail, a.applied
        FROM event, json_to_recordset(${JSON.stringify(attempts)}::text::json) AS a(
               attempt integer, lease_token bigint, worker text, started_at bigint, finished_at bigint,
               duration_ms integer, outcome text, http_status integer, error_class text, detail text,
               applied boolean)),
    replays AS (
      -- In the order given (their ids grow in it): listReplays reads them back by id.
      INSERT INTO event_replays (sender, event_id, requested_by, reason, forced, from_status, requested_at)
      SELECT event.sender, event.event_id, r.requested_by, r.reason, r.forced, r.from_status, r.requested_at
        FROM event, ROWS FROM (json_to_recordset(${JSON.stringify(replays)}::text::json) AS (
               requested_by text, reason text, forced boolean, from_status text, requested_at bigint))
             WITH ORDINALITY AS r(requested_by, reason, forced, from_status, requested_at, n)
       ORDER BY r.n)
    SELECT * FROM event`;
  return rows[0];
}
