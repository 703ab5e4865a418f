import type Database from "better-sqlite3";
import { NEW_SOURCE_COLUMNS, type NewSourceRow, type SourceRow } from "../rows.ts";
import type { SourceDeliveryFilter } from "../source-port.ts";

/**
 * The platforms' deliveries in SQL (migration 0006), and their writes as
 * named operations for the writer (write-ops.ts takes them in with the rest;
 * reserve inserts an accepted one with its event).
 */

export type SourceStatements = ReturnType<typeof prepareSourceStatements>;

type Statement<R> = Database.Statement<unknown[], R>;

/** The retention purge's rows: the partial index source_deliveries_by_received's condition, spelled alike. */
const PURGEABLE = "outcome = 'ignored' AND received_at < @olderThan";

/** The SQL of the platforms' deliveries, prepared once per connection. */
export function prepareSourceStatements(db: Database.Database) {
  const names = NEW_SOURCE_COLUMNS;
  const insertRow = `INSERT INTO source_deliveries (${names.join(", ")}) VALUES (${names.map((name) => `@${name}`).join(", ")})`;
  return {
    /** An unmapped delivery already kept under its key is the unique index's conflict: nothing is written. */
    insert: db.prepare(`${insertRow} ON CONFLICT DO NOTHING RETURNING *`) as Statement<SourceRow>,
    /**
     * reserve's accepted delivery, with its new event: the unique index is
     * for unmapped rows only, so nothing can conflict, and nothing is read back.
     */
    insertAccepted: db.prepare(insertRow),
    selectUnmapped: db.prepare(`
      SELECT * FROM source_deliveries
       WHERE sender = @sender AND platform = @platform AND key = @key AND outcome = 'unmapped'`) as Statement<SourceRow>,
    select: db.prepare("SELECT * FROM source_deliveries WHERE id = ?") as Statement<SourceRow>,
    /** The accepted delivery first, then one remapped to the event. */
    selectOfEvent: db.prepare(`
      SELECT * FROM source_deliveries WHERE sender = ? AND event_id = ?
       ORDER BY outcome = 'accepted' DESC, id LIMIT 1`) as Statement<SourceRow>,
    markRemapped: db.prepare(`
      UPDATE source_deliveries SET event_id = @eventId, remapped_at = @now, remapped_by = @by, remap_reason = @reason
       WHERE id = @id AND outcome = 'unmapped' AND remapped_at IS NULL`),
    // SQLite's DELETE … LIMIT needs a compile-time flag; an id subquery works everywhere.
    purge: db.prepare(`
      DELETE FROM source_deliveries WHERE id IN (
        SELECT id FROM source_deliveries INDEXED BY source_deliveries_by_received WHERE ${PURGEABLE} LIMIT @limit)`),
    list: listStatements(db),
    /**
     * exportPage: the primary key's range, oldest first, past the accepted
     * rows; NOT INDEXED keeps the planner off the outcome and retention
     * indexes, whose order is not the ids'.
     */
    exportPage: db.prepare(`
      SELECT * FROM source_deliveries NOT INDEXED
       WHERE id > @afterId AND outcome <> 'accepted' ORDER BY id LIMIT @limit`) as Statement<SourceRow>,
  };
}

/**
 * The list, one statement per combination of filters, prepared on first use:
 * "(@x IS NULL OR x = @x)" would keep the planner off the outcome index.
 */
function listStatements(db: Database.Database): (filter: SourceDeliveryFilter) => SourceRow[] {
  const prepared = new Map<string, Statement<SourceRow>>();
  return (filter) => {
    const conditions: string[] = [];
    const params: Record<string, string | number> = { limit: filter.limit };
    for (const name of ["sender", "platform", "outcome", "beforeId"] as const) {
      const value = filter[name];
      if (value === undefined) continue;
      conditions.push(name === "beforeId" ? "id < @beforeId" : `${name} = @${name}`);
      params[name] = value;
    }
    const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
    const sql = `SELECT * FROM source_deliveries ${where} ORDER BY id DESC LIMIT @limit`;
    let statement = prepared.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql) as Statement<SourceRow>;
      prepared.set(sql, statement);
    }
    return statement.all(params);
  };
}

/** Only a delivery's statements: what a source write needs of the writer's connection. */
interface WithSources {
  sources: SourceStatements;
}

/** The source writes, run by the writer like every other write (write-ops.ts). */
export const sourceWriteOps = {
  /** Inserted, or (an unmapped one whose key is kept already) the row already there: one savepoint either way. */
  recordSource(sql: WithSources, row: NewSourceRow): SourceRow {
    const inserted = sql.sources.insert.get(row);
    if (inserted !== undefined) return inserted;
    const kept = sql.sources.selectUnmapped.get(row);
    if (kept === undefined) throw new Error("a delivery conflicted with no row kept under its key");
    return kept;
  },

  markSourceRemapped(
    sql: WithSources,
    request: { id: number; eventId: string; now: number; by: string; reason: string },
  ): boolean {
    return sql.sources.markRemapped.run(request).changes > 0;
  },

  purgeSources(sql: WithSources, request: { olderThan: number; batchSize: number }): number {
    return sql.sources.purge.run({ olderThan: request.olderThan, limit: request.batchSize }).changes;
  },
};
