import type postgres from "postgres";
import type {
  Backlog,
  ClaimRequest,
  Lease,
  PurgeBound,
  PurgeRequest,
  RegisterChange,
  ReplayRequest,
  ReserveRequest,
  Settlement,
} from "../port.ts";
import { acceptedSourceRow, type EventRow, type NewSourceRow } from "../rows.ts";
import {
  allFinishedSql,
  claimKind,
  isRelease,
  noLostAheadSql,
  PENDING_SQL,
  purgeableStatuses,
  RELEASED_SET,
  replayAudit,
  replayedColumns,
  settledColumns,
  settleReleases,
} from "../rules.ts";
import { arrayLiteral } from "./array-literal.ts";

/**
 * The PostgreSQL register's SQL statements (migrations aside), but for the
 * console's and the admin API's reads (read-statements.ts).
 * Statements run in autocommit unless the caller passes a transaction.
 * Changes are told to other instances by publish(), after their commits,
 * never from inside a write (change-feed.ts says why).
 */

/** bigint (int8) columns hold epoch milliseconds and counts: well inside a double's exact range. */
export type Sql = postgres.Sql<{ bigint: number }>;
export type Db = postgres.ISql<{ bigint: number }>;

/** The channel every register instance on one database listens on. */
export const CHANGES_CHANNEL = "gateway_register_changes";

/** What travels in a notification: the port's change, and which register instance wrote it. */
export type ChangeNotice = RegisterChange & { origin: string };

/**
 * Whose clock stamps a statement's times. "database": PostgreSQL's now(), so
 * instances with skewed clocks agree on leases and due times; "node": the
 * caller's value (graphile-worker's useNodeTime), the escape hatch for a
 * database server whose clock is wrong.
 */
export type ClockSource = "database" | "node";

/** The caller's idea of now, and whether the statement uses it or the database's. */
export interface At {
  now: number;
  clock: ClockSource;
}

/**
 * "Now" as SQL. now() is the transaction's start: one value for the whole
 * statement, so received_at, next_attempt_at and the lease agree in a row.
 */
function nowOf(db: Db, at: At) {
  return at.clock === "database" ? db`(extract(epoch FROM now()) * 1000)::bigint` : db`${at.now}::bigint`;
}

/**
 * The database's time as the statement produces its rows, in epoch ms, as
 * the column `database_now`: with the rows a request's answer is made of,
 * so that the register knows the clock their times are on (database-clock.ts).
 * clock_timestamp(), not now(): the nearest to when the answer arrives.
 */
const databaseNowColumn = (db: Db) => db`(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS database_now`;

/** A row with the database's time it was read or written at (databaseNowColumn). */
export type Timed<R> = R & { database_now: number };

/** The database's time now, alone: a first reading of its clock (database-clock.ts). */
export async function databaseNow(db: Db): Promise<number> {
  const rows = await db<{ database_now: number }[]>`SELECT ${databaseNowColumn(db)}`;
  const row = rows[0];
  if (row === undefined) throw new Error("the database's clock returned no row");
  return row.database_now;
}

const pending = (db: Db) => db.unsafe(PENDING_SQL);
const due = (db: Db, at: At) =>
  db`${pending(db)} AND (lease_until IS NULL OR lease_until <= ${nowOf(db, at)}) AND next_attempt_at <= ${nowOf(db, at)}`;

/**
 * Records each event whose (sender, event_id) is not there yet, in one
 * statement: a batch of concurrent reservations, one commit. Within the
 * batch the first request for a key (by position) is the one that may
 * insert. Rows are inserted in key order, so two batches that share keys
 * wait for each other in the same order and never deadlock. A new event's
 * platform delivery (ReserveRequest.source) is inserted by the same
 * statement, so it commits with its event or not at all; that of a request
 * that found its event is not. Returns the new rows only, each with the
 * 1-based position of the request that made it.
 */
export async function insertEvents(
  db: Db,
  batch: readonly ReserveRequest[],
  clock: ClockSource,
): Promise<Timed<EventRow & { ord: number }>[]> {
  const column = (key: "sender" | "eventId" | "fingerprint" | "policyVersion" | "correlationId" | "body" | "now") =>
    arrayLiteral(batch.map((p) => p[key]));
  const sources = batch.map(sourceOf);
  const source = <K extends keyof NewSourceRow>(key: K) => arrayLiteral(sources.map((row) => row?.[key] ?? null));
  const now = clock === "database" ? db`(extract(epoch FROM now()) * 1000)::bigint` : db`caller_now`;
  return db<Timed<EventRow & { ord: number }>[]>`
    WITH input AS (
      SELECT * FROM unnest(${column("sender")}::text[], ${column("eventId")}::text[],
                           ${column("fingerprint")}::text[], ${column("policyVersion")}::text[],
                           ${column("correlationId")}::text[], ${column("body")}::text[],
                           ${column("now")}::bigint[],
                           ${arrayLiteral(batch.map((p) => p.traceContext ?? null))}::text[],
                           ${source("platform")}::text[], ${source("key")}::text[], ${source("reason")}::text[],
                           ${source("ids")}::text[], ${source("payload")}::text[], ${source("content_type")}::text[],
                           ${source("correlation_id")}::text[],
                           ${source("received_at")}::bigint[])
        WITH ORDINALITY AS t(sender, event_id, fingerprint, policy_version, correlation_id, body, caller_now,
                             trace_context, source_platform, source_key, source_reason, source_ids, source_payload,
                             source_content_type, source_correlation_id, source_received_at, ord)),
    firsts AS (
      SELECT DISTINCT ON (sender, event_id) *, ${now} AS stamped FROM input
       ORDER BY sender, event_id, ord),
    inserted AS (
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  round_started_at, next_attempt_at, received_at, updated_at, trace_context)
      SELECT sender, event_id, fingerprint, policy_version, 'PROCESSING', correlation_id, body,
             stamped, stamped, stamped, stamped, trace_context
        FROM firsts ORDER BY sender COLLATE "C", event_id COLLATE "C"
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *),
    sourced AS (
      INSERT INTO source_deliveries (sender, platform, key, outcome, reason, event_id, ids, payload, content_type,
                                     correlation_id, received_at)
      SELECT inserted.sender, source_platform, source_key, 'accepted', source_reason, inserted.event_id, source_ids,
             source_payload, source_content_type, source_correlation_id, source_received_at
        FROM inserted JOIN firsts ON firsts.sender = inserted.sender AND firsts.event_id = inserted.event_id
       WHERE source_platform IS NOT NULL)
    SELECT inserted.*, firsts.ord::integer AS ord, ${databaseNowColumn(db)} FROM inserted
      JOIN firsts ON firsts.sender = inserted.sender AND firsts.event_id = inserted.event_id`;
}

/** A request's platform delivery as its accepted row would be, or null when it has none. */
function sourceOf(request: ReserveRequest): NewSourceRow | null {
  const { source } = request;
  return source === undefined ? null : acceptedSourceRow({ ...request, source });
}

/** The rows of these keys that exist; absent keys are simply not there. */
export function selectEventsByKeys(db: Db, keys: readonly { sender: string; eventId: string }[]) {
  return db<Timed<EventRow>[]>`
    SELECT e.*, ${databaseNowColumn(db)} FROM inbound_events e
      JOIN unnest(${arrayLiteral(keys.map((k) => k.sender))}::text[],
                  ${arrayLiteral(keys.map((k) => k.eventId))}::text[]) AS k(sender, event_id)
        ON e.sender = k.sender AND e.event_id = k.event_id`;
}

export async function selectEvent(db: Db, sender: string, eventId: string): Promise<Timed<EventRow> | undefined> {
  const rows = await db<Timed<EventRow>[]>`
    SELECT *, ${databaseNowColumn(db)} FROM inbound_events WHERE sender = ${sender} AND event_id = ${eventId}`;
  return rows[0];
}

/** The row locked until the transaction ends, with the statement's now: replay decides on them. */
export async function selectEventForUpdate(
  db: Db,
  sender: string,
  eventId: string,
  at: At,
): Promise<{ row: EventRow; now: number } | undefined> {
  const rows = await db<(EventRow & { clock_now: number })[]>`
    SELECT *, ${nowOf(db, at)} AS clock_now FROM inbound_events
     WHERE sender = ${sender} AND event_id = ${eventId} FOR UPDATE`;
  const locked = rows[0];
  if (locked === undefined) return undefined;
  const { clock_now: now, ...row } = locked;
  return { row, now };
}

export type ClaimParams = ClaimRequest & At;

/**
 * One statement per batch: lock due rows nobody else is locking (SKIP LOCKED:
 * concurrent claimers take different events instead of queueing), lease them
 * with a new fencing token, and open their attempt rows of the claim's kind
 * (a claim ahead takes only the events rules.ts allows, and may come back
 * with fewer than its limit when some of the oldest due are not allowed).
 */
export async function claimDue(db: Db, p: ClaimParams): Promise<EventRow[]> {
  const now = nowOf(db, p);
  const kind = claimKind(p);
  const which = p.only === undefined ? db`` : db`AND sender = ${p.only.sender} AND event_id = ${p.only.eventId}`;
  // A claim ahead's conditions apply to the rows the limit took, not in the search for them: with
  // attempts = finished_attempts there, the planner's guess of its selectivity makes it sort every due
  // row instead of reading the due index in order (0.2 ms → 37 ms on 10 000), and the subquery on
  // delivery_attempts would run once per due row. So a claim ahead may return fewer than it could.
  const ahead =
    kind === "ahead" ? db`AND ${db.unsafe(allFinishedSql("due"))} AND ${db.unsafe(noLostAheadSql("due"))}` : db``;
  return db<EventRow[]>`
    WITH due AS (
      SELECT sender, event_id, attempts, finished_attempts FROM inbound_events
       WHERE ${due(db, p)} ${which}
       ORDER BY next_attempt_at, received_at
       LIMIT ${p.limit}
       FOR UPDATE SKIP LOCKED),
    claimed AS (
      UPDATE inbound_events e
         SET status = 'PROCESSING', attempts = e.attempts + 1, round_attempts = e.round_attempts + 1,
             lease_owner = ${p.owner}, lease_token = e.lease_token + 1, lease_until = ${now} + ${p.leaseMs}::bigint,
             updated_at = ${now}
        FROM due
       WHERE e.sender = due.sender AND e.event_id = due.event_id ${ahead}
      RETURNING e.*),
    opened AS (
      INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at, kind)
      SELECT sender, event_id, attempts, lease_token, ${p.owner}, ${now}, ${kind} FROM claimed)
    SELECT * FROM claimed ORDER BY next_attempt_at, received_at, sender, event_id`;
}

export interface SettleParams extends At {
  lease: Lease;
  settlement: Settlement;
  durationMs: number;
  outcome: string;
  httpStatus: number | null;
  errorClass: string | null;
  detail: string | null;
}

/**
 * Writes the outcome (rules.ts, settledColumns) only under the newest lease
 * (fencing), and the attempt's own row either way, with `applied` saying
 * which: one statement. A release (rules.ts, RELEASED_SET) undoes the claim
 * and deletes its attempt row, under the fence too.
 */
export async function settleEvent(db: Db, p: SettleParams): Promise<EventRow | undefined> {
  const now = nowOf(db, p);
  const { sender, eventId, token } = p.lease;
  if (isRelease(p.settlement)) {
    const released = await db<EventRow[]>`
      WITH released AS (
        UPDATE inbound_events SET ${db.unsafe(RELEASED_SET)}, updated_at = ${now}
         WHERE sender = ${sender} AND event_id = ${eventId} AND lease_token = ${token} AND ${pending(db)}
        RETURNING *),
      unsent AS (
        DELETE FROM delivery_attempts
         WHERE sender = ${sender} AND event_id = ${eventId} AND lease_token = ${token}
           AND EXISTS (SELECT 1 FROM released))
      SELECT * FROM released`;
    return released[0];
  }
  const { next_attempt_at: nextAttemptAt, ...columns } = settledColumns(p.settlement);
  const next = nextAttemptAt === null ? db`NULL` : db`${now} + ${retryDelay(nextAttemptAt, p)}::bigint`;
  const rows = await db<EventRow[]>`
    WITH settled AS (
      UPDATE inbound_events
         SET ${db(columns)}, next_attempt_at = ${next}, lease_owner = NULL, lease_until = NULL,
             finished_attempts = finished_attempts + 1,
             round_attempts = round_attempts - ${settleReleases(p.settlement).refund}, updated_at = ${now}
       WHERE sender = ${sender} AND event_id = ${eventId} AND lease_token = ${token} AND ${pending(db)}
      RETURNING *),
    finished AS (
      UPDATE delivery_attempts
         SET finished_at = ${now}, duration_ms = ${p.durationMs}, outcome = ${p.outcome},
             http_status = ${p.httpStatus}::integer, error_class = ${p.errorClass}::text, detail = ${p.detail}::text,
             applied = EXISTS (SELECT 1 FROM settled)
       WHERE sender = ${sender} AND event_id = ${eventId} AND lease_token = ${token})
    SELECT * FROM settled`;
  return rows[0];
}

/**
 * The policy decides the next attempt on the caller's clock; what it decided
 * is the delay, which then runs on the statement's clock (the same instant
 * under "node").
 */
function retryDelay(nextAttemptAt: number, at: At): number {
  return Math.max(0, nextAttemptAt - at.now);
}

/** Retries held back by an outage become due now. */
export async function bringForward(db: Db, at: At): Promise<number> {
  const now = nowOf(db, at);
  const result = await db`
    UPDATE inbound_events SET next_attempt_at = ${now}, updated_at = ${now}
     WHERE status = 'FAILED_RETRYABLE' AND next_attempt_at > ${now}
       AND (lease_until IS NULL OR lease_until <= ${now})`;
  return result.count;
}

/**
 * Due again with a fresh budget (rules.ts, replayedColumns), and its audit
 * row; inside the caller's transaction, on the row it locked and decided on.
 */
export async function replayEvent(db: Db, request: ReplayRequest, row: EventRow, now: number): Promise<EventRow> {
  const key = { sender: row.sender, event_id: row.event_id };
  const rows = await db<EventRow[]>`
    WITH replayed AS (
      UPDATE inbound_events SET ${db(replayedColumns(row, now))}
       WHERE sender = ${row.sender} AND event_id = ${row.event_id}
      RETURNING *),
    audit AS (INSERT INTO event_replays ${db({ ...key, ...replayAudit(request, row, now) })})
    SELECT * FROM replayed`;
  const replayed = rows[0];
  if (replayed === undefined) throw new Error("row vanished inside its own transaction");
  return replayed;
}

const purgeableBefore = (db: Db, bound: PurgeBound) => {
  const [succeeded, failed] = purgeableStatuses(bound);
  return db`status IN (${succeeded}, ${failed}) AND updated_at < ${bound.olderThan}`;
};

/**
 * One batch; SKIP LOCKED so that two purgers (two instances) take different
 * rows instead of waiting. By ctid, locked in the same statement so it cannot
 * move: a TID scan, where a join on the key would scan the table once per batch.
 */
export async function purge(db: Db, request: PurgeRequest): Promise<number> {
  const result = await db`
    DELETE FROM inbound_events WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM inbound_events WHERE ${purgeableBefore(db, request)}
       LIMIT ${request.batchSize} FOR UPDATE SKIP LOCKED))`;
  return result.count;
}

export async function countFinished(db: Db, bound: PurgeBound): Promise<number> {
  const rows = await db<{ count: number }[]>`
    SELECT count(*) AS count FROM inbound_events WHERE ${purgeableBefore(db, bound)}`;
  return rows[0]?.count ?? 0;
}

export async function backlog(db: Db): Promise<Backlog> {
  const rows = await db<Backlog[]>`
    SELECT (SELECT count(*) FROM inbound_events WHERE ${pending(db)}) AS pending,
           (SELECT min(received_at) FROM inbound_events WHERE ${pending(db)}) AS "oldestPendingReceivedAt",
           (SELECT count(*) FROM inbound_events WHERE status = 'FAILED_FINAL') AS "failedFinal"`;
  return rows[0] ?? { pending: 0, oldestPendingReceivedAt: null, failedFinal: 0 };
}

/** Larger than a page, as a large order's body is: the probe's row needs TOAST and WAL as a reservation's does. */
const PROBE_PAYLOAD_CHARS = 6 * 1024;

/**
 * Readiness's proof that the server takes writes now: a row written and
 * deleted in one committed transaction (migration 0007), so it fails on a
 * standby, on a server or tablespace made read-only, on a full disk, and
 * waits for the WAL flush a reservation waits for (synchronous_commit on).
 * One round trip: two statements in one simple query are one transaction.
 */
export async function probeWrite(db: Db): Promise<void> {
  await db.unsafe(`
    INSERT INTO register_probe (probed_at, payload)
    VALUES ((extract(epoch FROM now()) * 1000)::bigint, repeat('p', ${PROBE_PAYLOAD_CHARS}));
    DELETE FROM register_probe WHERE id = lastval()`);
}

/**
 * Tells every instance about committed changes: one statement, one
 * transaction, whatever the number of notices. Never inside a write: a
 * transaction that notifies holds a database-wide lock through its commit
 * and its WAL flush, which would queue every writer's commit behind it.
 */
export async function publish(db: Db, notices: readonly string[]): Promise<void> {
  await db`SELECT pg_notify(${CHANGES_CHANNEL}, notice) FROM unnest(${arrayLiteral(notices)}::text[]) AS notice`;
}

/**
 * One hit in `key`'s window of `windowMs`, as @fastify/rate-limit's local
 * store counts: a window opens at the first hit after the last one ended
 * (not on the clock's round minutes, where a burst across the edge would
 * get twice the limit), timed by the database's clock so that every
 * instance counts into the same one. Returns the hits so far and the
 * milliseconds until the window ends.
 */
export async function countHit(db: Db, key: string, windowMs: number): Promise<{ hits: number; reset_in: number }> {
  const rows = await db<{ hits: number; reset_in: number }[]>`
    WITH clock AS (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now),
    counted AS (
      INSERT INTO rate_limit_windows AS r (key, window_start, hits)
      SELECT ${key}, now, 1 FROM clock
      ON CONFLICT (key) DO UPDATE
         SET hits = CASE WHEN r.window_start + ${windowMs}::bigint > excluded.window_start THEN r.hits + 1 ELSE 1 END,
             window_start = CASE WHEN r.window_start + ${windowMs}::bigint > excluded.window_start
                                 THEN r.window_start ELSE excluded.window_start END
      RETURNING hits, window_start)
    SELECT hits, (window_start + ${windowMs}::bigint - clock.now)::integer AS reset_in FROM counted, clock`;
  const row = rows[0];
  if (row === undefined) throw new Error("the hit counter returned no row");
  return row;
}
