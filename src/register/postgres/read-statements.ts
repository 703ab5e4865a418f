import type { ListFilter, PageCursor } from "../port.ts";
import { ATTEMPT_COLUMNS, type AttemptRow, type EventRow, REPLAY_COLUMNS, type ReplayRow } from "../rows.ts";
import type { Db } from "./statements.ts";

/**
 * The PostgreSQL register's reads for the console and the admin API: an
 * event's attempts and replays, the lists, the pages, the search and the
 * counts by status. Each reads in autocommit; none takes a lock.
 */

/** A row type's columns as a select list; flags come back as 0/1, as SQLite keeps them. */
function selectList(db: Db, columns: Record<string, string>) {
  const list = Object.entries(columns).map(([name, type]) =>
    type.startsWith("flag") ? `${name}::integer AS ${name}` : name,
  );
  return db.unsafe(list.join(", "));
}

export function selectAttempts(db: Db, sender: string, eventId: string) {
  return db<AttemptRow[]>`
    SELECT ${selectList(db, ATTEMPT_COLUMNS)} FROM delivery_attempts WHERE sender = ${sender} AND event_id = ${eventId} ORDER BY lease_token`;
}

export function selectReplays(db: Db, sender: string, eventId: string) {
  return db<ReplayRow[]>`
    SELECT ${selectList(db, REPLAY_COLUMNS)} FROM event_replays
     WHERE sender = ${sender} AND event_id = ${eventId} ORDER BY id`;
}

export function selectByEventId(db: Db, eventId: string) {
  return db<EventRow[]>`SELECT * FROM inbound_events WHERE event_id = ${eventId} ORDER BY sender`;
}

function bounds(db: Db, filter: Omit<ListFilter, "limit">) {
  // Typed NULLs: "no bound" must not leave the parameter's type to guesswork.
  return db`(${filter.sender ?? null}::text IS NULL OR sender = ${filter.sender ?? null}::text)
        AND (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null}::text)
        AND (${filter.since ?? null}::bigint IS NULL OR received_at >= ${filter.since ?? null}::bigint)
        AND (${filter.until ?? null}::bigint IS NULL OR received_at <= ${filter.until ?? null}::bigint)`;
}

export function list(db: Db, filter: ListFilter) {
  return db<EventRow[]>`
    SELECT * FROM inbound_events WHERE ${bounds(db, filter)} ORDER BY received_at, event_id LIMIT ${filter.limit}`;
}

export function page(db: Db, filter: ListFilter & { before?: PageCursor }) {
  const before =
    filter.before === undefined
      ? db``
      : db`AND (received_at, sender, event_id) < (${filter.before.receivedAt}::bigint, ${filter.before.sender}::text,
                                                  ${filter.before.eventId}::text)`;
  return db<EventRow[]>`
    SELECT * FROM inbound_events WHERE ${bounds(db, filter)} ${before}
     ORDER BY received_at DESC, sender DESC, event_id DESC LIMIT ${filter.limit}`;
}

/**
 * The console's search: every key compared for equality with one term, each
 * served by its own index (migration 0003) through a BitmapOr, then the few
 * matches sorted. The body expressions must stay exactly those of the
 * indexes, or the search scans the table. Returned unawaited, so that a test
 * can EXPLAIN the very statement.
 */
export function search(db: Db, term: string, limit: number) {
  return db<EventRow[]>`
    SELECT * FROM inbound_events
     WHERE event_id = ${term} OR correlation_id = ${term} OR order_id = ${term} OR order_number = ${term}
        OR (body::jsonb #>> '{order,id}') = ${term} OR (body::jsonb #>> '{order,number}') = ${term}
     ORDER BY received_at DESC, sender, event_id LIMIT ${limit}`;
}

export function countByStatus(db: Db, filter: Omit<ListFilter, "limit">) {
  return db<{ status: string; count: number }[]>`
    SELECT status, count(*) AS count FROM inbound_events WHERE ${bounds(db, filter)} GROUP BY status`;
}
