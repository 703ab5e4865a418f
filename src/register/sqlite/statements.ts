import type Database from "better-sqlite3";
import type { ListFilter, PageCursor, PurgeBound } from "../port.ts";
import {
  ATTEMPT_COLUMNS,
  type AttemptRow,
  columnNames,
  EVENT_COLUMNS,
  type EventRow,
  MOVED_SOURCE_COLUMNS,
  REPLAY_COLUMNS,
  type ReplayRow,
  SEARCH_KEY_COLUMNS,
} from "../rows.ts";
import { allFinishedSql, noLostAheadSql, PENDING_SQL, purgeableStatuses, RELEASED_SET } from "../rules.ts";

/**
 * The register's SQL on SQLite (the sessions' is in session-statements.ts),
 * prepared once per connection: the updates whose SET list a rule decides
 * once per shape, and the import's only when `gateway import` runs.
 */

type Statement<R> = Database.Statement<unknown[], R>;

const DUE = `${PENDING_SQL} AND (lease_until IS NULL OR lease_until <= @now) AND next_attempt_at <= @now`;
// Named index: a statement the planner cannot serve from it fails to prepare instead of scanning the table.
/** Bound by purgeBindings. */
const PURGEABLE_BEFORE = `inbound_events INDEXED BY inbound_events_by_status
  WHERE status IN (@succeeded, @failed) AND updated_at < @olderThan`;

/** PURGEABLE_BEFORE's named values (rules.ts, purgeableStatuses). */
export function purgeBindings(bound: PurgeBound): { olderThan: number; succeeded: string; failed: string | null } {
  const [succeeded, failed] = purgeableStatuses(bound);
  return { olderThan: bound.olderThan, succeeded, failed };
}
const KEY = "sender = @sender AND event_id = @eventId";

/**
 * The console's search: every key compared for equality with one term, each
 * served by its own index (migrations 0003, 0009) through SQLite's MULTI-INDEX OR, then
 * the few matches sorted (event_id by the primary key's prefix, migration 0009).
 * Exported for the plan's test.
 */
export const SEARCH_SQL = `
  SELECT * FROM inbound_events
   WHERE event_id = @term OR correlation_id = @term OR order_id = @term OR order_number = @term
      OR site_order_id = @term OR site_order_number = @term
   ORDER BY received_at DESC, sender, event_id LIMIT @limit`;

/** `INSERT INTO table (names) VALUES (@names)`: a row object binds by its own column names. */
function insertSql(table: string, names: readonly string[]): string {
  return `INSERT INTO ${table} (${names.join(", ")}) VALUES (${names.map((name) => `@${name}`).join(", ")})`;
}

/** `name = @name, …` for the columns a rule (rules.ts) writes. */
function setSql(names: readonly string[]): string {
  return names.map((name) => `${name} = @${name}`).join(", ");
}

export type Statements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: Database.Database) {
  /** Statements whose SET list a rule decides (settledColumns, replayedColumns): one per shape, on first use. */
  const byShape = new Map<string, Statement<EventRow>>();
  const updateSetting = (columns: object, tail: string): Statement<EventRow> => {
    const set = setSql(Object.keys(columns));
    const sql = `UPDATE inbound_events SET ${set} ${tail} RETURNING *`;
    const prepared = byShape.get(sql) ?? (db.prepare(sql) as Statement<EventRow>);
    byShape.set(sql, prepared);
    return prepared;
  };
  return {
    insert: db.prepare(`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  round_started_at, next_attempt_at, received_at, updated_at, trace_context,
                                  site_order_id, site_order_number)
      VALUES (@sender, @eventId, @fingerprint, @policyVersion, 'PROCESSING', @correlationId, @body,
              @now, @now, @now, @now, @traceContext, @siteOrderId, @siteOrderNumber)
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *`) as Statement<EventRow>,
    select: db.prepare("SELECT * FROM inbound_events WHERE sender = ? AND event_id = ?") as Statement<EventRow>,
    // Named index: the planner otherwise takes the status index and sorts every pending row on each claim.
    selectDue: db.prepare(`
      SELECT * FROM inbound_events INDEXED BY inbound_events_due WHERE ${DUE}
       ORDER BY next_attempt_at, received_at LIMIT @limit`) as Statement<EventRow>,
    /** selectDue for a claim ahead (rules.ts, allFinishedSql and noLostAheadSql), walking the due index in order. */
    selectDueAhead: db.prepare(`
      SELECT * FROM inbound_events INDEXED BY inbound_events_due
       WHERE ${DUE} AND ${allFinishedSql("inbound_events")} AND ${noLostAheadSql("inbound_events")}
       ORDER BY next_attempt_at, received_at LIMIT @limit`) as Statement<EventRow>,
    selectDueOne: db.prepare(`SELECT * FROM inbound_events WHERE ${KEY} AND ${DUE}`) as Statement<EventRow>,
    claim: db.prepare(`
      UPDATE inbound_events
         SET status = 'PROCESSING', attempts = attempts + 1, round_attempts = round_attempts + 1,
             lease_owner = @owner, lease_token = lease_token + 1, lease_until = @leaseUntil, updated_at = @now
       WHERE ${KEY} AND ${DUE}
      RETURNING *`) as Statement<EventRow>,
    /** settledColumns under the fence, with settleReleases. */
    settle: (columns: object) =>
      updateSetting(
        columns,
        `, lease_owner = NULL, lease_until = NULL, finished_attempts = finished_attempts + 1,
           round_attempts = round_attempts - @refund, updated_at = @now
         WHERE ${KEY} AND lease_token = @token AND ${PENDING_SQL}`,
      ),
    /** rules.ts, RELEASED_SET, under the fence; the attempt row goes with deleteAttempt. */
    release: db.prepare(`
      UPDATE inbound_events SET ${RELEASED_SET}, updated_at = @now
       WHERE ${KEY} AND lease_token = @token AND ${PENDING_SQL}
      RETURNING *`) as Statement<EventRow>,
    deleteAttempt: db.prepare(`DELETE FROM delivery_attempts WHERE ${KEY} AND lease_token = @token`),
    bringForward: db.prepare(`
      UPDATE inbound_events SET next_attempt_at = @now, updated_at = @now
       WHERE status = 'FAILED_RETRYABLE' AND next_attempt_at > @now AND (lease_until IS NULL OR lease_until <= @now)`),
    insertAttempt: db.prepare(`
      INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at, kind)
      VALUES (@sender, @eventId, @attempt, @leaseToken, @worker, @startedAt, @kind)`),
    finishAttempt: db.prepare(`
      UPDATE delivery_attempts
         SET finished_at = @now, duration_ms = @durationMs, outcome = @outcome, http_status = @httpStatus,
             error_class = @errorClass, detail = @detail, applied = @applied
       WHERE ${KEY} AND lease_token = @token`),
    selectAttempts: db.prepare(`
      SELECT ${columnNames(ATTEMPT_COLUMNS).join(", ")}
        FROM delivery_attempts WHERE sender = ? AND event_id = ? ORDER BY lease_token`) as Statement<AttemptRow>,
    /** replayedColumns on one event. */
    replay: (columns: object) => updateSetting(columns, `WHERE ${KEY}`),
    /** A replay's audit row, or an imported one: in the order written, as listReplays reads them back. */
    insertReplay: db.prepare(insertSql("event_replays", ["sender", "event_id", ...columnNames(REPLAY_COLUMNS)])),
    backlog: db.prepare(`
      SELECT (SELECT count(*) FROM inbound_events WHERE ${PENDING_SQL}) AS pending,
             (SELECT min(received_at) FROM inbound_events WHERE ${PENDING_SQL}) AS oldestPendingReceivedAt,
             (SELECT count(*) FROM inbound_events WHERE status = 'FAILED_FINAL') AS failedFinal`) as Statement<{
      pending: number;
      oldestPendingReceivedAt: number | null;
      failedFinal: number;
    }>,
    selectByEventId: db.prepare(
      "SELECT * FROM inbound_events WHERE event_id = ? ORDER BY sender",
    ) as Statement<EventRow>,
    selectReplays: db.prepare(`
      SELECT ${columnNames(REPLAY_COLUMNS).join(", ")} FROM event_replays
       WHERE sender = ? AND event_id = ? ORDER BY id`) as Statement<ReplayRow>,
    page: db.prepare(`
      SELECT * FROM inbound_events WHERE ${BOUNDS}
         AND (@beforeAt IS NULL OR (received_at, sender, event_id) < (@beforeAt, @beforeSender, @beforeId))
       ORDER BY received_at DESC, sender DESC, event_id DESC LIMIT @limit`) as Statement<EventRow>,
    list: db.prepare(`
      SELECT * FROM inbound_events WHERE ${BOUNDS} ORDER BY received_at, event_id LIMIT @limit`) as Statement<EventRow>,
    // SQLite's DELETE … LIMIT needs a compile-time flag; a rowid subquery works everywhere.
    purge: db.prepare(`
      DELETE FROM inbound_events WHERE rowid IN (SELECT rowid FROM ${PURGEABLE_BEFORE} LIMIT @limit)`),
    countFinished: db.prepare(`SELECT count(*) AS count FROM ${PURGEABLE_BEFORE}`) as Statement<{ count: number }>,
    countByStatus: db.prepare(`
      SELECT status, count(*) AS count FROM inbound_events WHERE ${BOUNDS} GROUP BY status`) as Statement<{
      status: string;
      count: number;
    }>,
    search: db.prepare(SEARCH_SQL) as Statement<EventRow>,
  };
}

/** The list's bounds; SQL reads NULL as "no bound". */
const BOUNDS = `(@sender IS NULL OR sender = @sender) AND (@status IS NULL OR status = @status)
         AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at <= @until)`;

export type ImportStatements = ReturnType<typeof prepareImportStatements>;

/** importEvent's rows (rules.ts, importRows), prepared on first use: only `gateway import` needs them. */
export function prepareImportStatements(db: Database.Database) {
  return {
    event: db.prepare(
      `${insertSql("inbound_events", [...columnNames(EVENT_COLUMNS), ...SEARCH_KEY_COLUMNS])} ON CONFLICT (sender, event_id) DO NOTHING RETURNING *`,
    ) as Statement<EventRow>,
    attempt: db.prepare(insertSql("delivery_attempts", ["sender", "event_id", ...columnNames(ATTEMPT_COLUMNS)])),
    source: db.prepare(IMPORT_SOURCE_SQL) as Statement<{ id: number }>,
  };
}

/**
 * importDelivery's insert (source-port.ts), unless the delivery is there: an
 * unmapped one by the unique index's conflict, an ignored one by the same
 * sender, platform, key, time and correlation id, looked up in the retention's
 * index (its condition spelled alike, so that INDEXED BY can take it).
 */
const IMPORT_SOURCE_SQL = `
  INSERT INTO source_deliveries (${MOVED_SOURCE_COLUMNS.join(", ")})
  SELECT ${MOVED_SOURCE_COLUMNS.map((name) => `@${name}`).join(", ")}
   WHERE NOT EXISTS (
     SELECT 1 FROM source_deliveries INDEXED BY source_deliveries_by_received
      WHERE outcome = 'ignored' AND received_at = @received_at AND outcome = @outcome
        AND sender = @sender AND platform = @platform AND key = @key AND correlation_id = @correlation_id)
  ON CONFLICT DO NOTHING
  RETURNING id`;

/** The bounds of `list`, `page` and `countByStatus` as named parameters. */
export function filterParams(filter: Partial<ListFilter> & { before?: PageCursor }) {
  return {
    sender: filter.sender ?? null,
    status: filter.status ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
    limit: filter.limit ?? null,
    beforeAt: filter.before?.receivedAt ?? null,
    beforeSender: filter.before?.sender ?? "",
    beforeId: filter.before?.eventId ?? "",
  };
}
