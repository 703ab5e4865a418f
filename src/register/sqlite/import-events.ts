import type Database from "better-sqlite3";
import type { EventSnapshot } from "../port.ts";
import type { EventRow } from "../rows.ts";

/**
 * The SQL of importEvent (`gateway import`): one event's row, attempts and
 * replays, written as another register held them. Prepared on first use:
 * only an import needs them.
 */

export type ImportStatements = ReturnType<typeof prepareImportStatements>;

export function prepareImportStatements(db: Database.Database) {
  return {
    // No lease: its holder worked on the old register. The token stays, so fencing keeps growing.
    event: db.prepare(`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  response_status, response_body, order_id, order_number, last_error,
                                  last_error_class, attempts, finished_attempts, round_attempts, round_started_at,
                                  lease_owner, lease_token, lease_until, next_attempt_at, received_at, updated_at)
      VALUES (@sender, @eventId, @fingerprint, @policyVersion, @status, @correlationId, @body,
              @responseStatus, @responseBody, @orderId, @orderNumber, @lastError,
              @lastErrorClass, @attempts, @finishedAttempts, @roundAttempts, @roundStartedAt,
              NULL, @leaseToken, NULL, @nextAttemptAt, @receivedAt, @updatedAt)
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *`) as Database.Statement<unknown[], EventRow>,
    attempt: db.prepare(`
      INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at, finished_at,
                                     duration_ms, outcome, http_status, error_class, detail, applied)
      VALUES (@sender, @eventId, @attempt, @leaseToken, @worker, @startedAt, @finishedAt,
              @durationMs, @outcome, @httpStatus, @errorClass, @detail, @applied)`),
    // In the order given: listReplays reads them back by id.
    replay: db.prepare(`
      INSERT INTO event_replays (sender, event_id, requested_by, reason, forced, from_status, requested_at)
      VALUES (@sender, @eventId, @requestedBy, @reason, @forced, @fromStatus, @requestedAt)`),
  };
}

/**
 * Inside the caller's transaction. Returns the new row, or undefined when
 * (sender, event_id) was already there: then nothing is written.
 */
export function importSnapshot(sql: ImportStatements, snapshot: EventSnapshot): EventRow | undefined {
  const { record } = snapshot;
  const key = { sender: record.sender, eventId: record.eventId };
  const row = sql.event.get({
    ...key,
    fingerprint: record.fingerprint,
    policyVersion: record.policyVersion,
    status: record.status,
    correlationId: record.correlationId,
    body: record.body,
    responseStatus: record.response?.status ?? null,
    responseBody: record.response?.body ?? null,
    orderId: record.order?.id ?? null,
    orderNumber: record.order?.number ?? null,
    lastError: record.lastError,
    lastErrorClass: record.lastErrorClass,
    attempts: record.attempts,
    finishedAttempts: record.finishedAttempts,
    roundAttempts: record.roundAttempts,
    roundStartedAt: record.roundStartedAt,
    leaseToken: record.leaseToken,
    nextAttemptAt: record.nextAttemptAt,
    receivedAt: record.receivedAt,
    updatedAt: record.updatedAt,
  });
  if (row === undefined) return undefined;
  for (const attempt of snapshot.attempts) {
    sql.attempt.run({
      ...key,
      attempt: attempt.attempt,
      leaseToken: attempt.leaseToken,
      worker: attempt.worker,
      startedAt: attempt.startedAt,
      finishedAt: attempt.finishedAt,
      durationMs: attempt.durationMs,
      outcome: attempt.outcome,
      httpStatus: attempt.httpStatus,
      errorClass: attempt.errorClass,
      detail: attempt.detail,
      applied: attempt.applied === null ? null : Number(attempt.applied),
    });
  }
  for (const replay of snapshot.replays) {
    sql.replay.run({
      ...key,
      requestedBy: replay.requestedBy,
      reason: replay.reason,
      forced: Number(replay.forced),
      fromStatus: replay.fromStatus,
      requestedAt: replay.requestedAt,
    });
  }
  return row;
}
