import { ATTEMPT_COLUMNS, columnNames, type EventRow, NEW_SOURCE_COLUMNS, REPLAY_COLUMNS } from "../rows.ts";
import type { ImportRows } from "../rules.ts";
import type { Db } from "./statements.ts";

/**
 * importEvent's rows (rules.ts, importRows) in one statement, so one
 * transaction. Each table's rows travel as one JSON parameter, typed by the
 * table itself (json_populate_record): any number of them, no parameter
 * limit, no type left to guesswork. Returns the new row, or undefined when
 * (sender, event_id) was already there: then nothing is written.
 */
export async function importSnapshot(db: Db, rows: ImportRows): Promise<EventRow | undefined> {
  const attempts = columnNames(ATTEMPT_COLUMNS);
  const replays = columnNames(REPLAY_COLUMNS);
  // The delivery's own columns, but the key of the row inserted: none on a conflict, as for the attempts.
  const sources = NEW_SOURCE_COLUMNS;
  const sourceValues = sources.map((name) =>
    name === "sender" || name === "event_id" ? `event.${name}` : `s.${name}`,
  );
  // The attempts and replays join the inserted row: on a conflict there is none, and they go nowhere.
  const inserted = await db<EventRow[]>`
    WITH event AS (
      INSERT INTO inbound_events
      SELECT * FROM json_populate_record(NULL::inbound_events, ${JSON.stringify(rows.event)}::text::json)
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *),
    attempts AS (
      INSERT INTO delivery_attempts (sender, event_id, ${db.unsafe(attempts.join(", "))})
      SELECT event.sender, event.event_id, ${db.unsafe(attempts.map((name) => `a.${name}`).join(", "))}
        FROM event, json_populate_recordset(NULL::delivery_attempts, ${JSON.stringify(rows.attempts)}::text::json) AS a),
    replays AS (
      -- In the order given (their ids grow in it): listReplays reads them back by id.
      INSERT INTO event_replays (sender, event_id, ${db.unsafe(replays.join(", "))})
      SELECT event.sender, event.event_id, ${db.unsafe(replays.map((name) => `r.${name}`).join(", "))}
        FROM event, ROWS FROM (json_populate_recordset(NULL::event_replays, ${JSON.stringify(rows.replays)}::text::json))
             WITH ORDINALITY AS r
       ORDER BY r.ordinality),
    source AS (
      -- Accepted, under the event's own key (rules.ts, importRows): it goes where the event goes.
      INSERT INTO source_deliveries (${db.unsafe(sources.join(", "))})
      SELECT ${db.unsafe(sourceValues.join(", "))}
        FROM event, json_populate_recordset(NULL::source_deliveries, ${JSON.stringify(rows.source === null ? [] : [rows.source])}::text::json) AS s)
    SELECT * FROM event`;
  return inserted[0];
}
