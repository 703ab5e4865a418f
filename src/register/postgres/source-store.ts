import {
  MOVED_SOURCE_COLUMNS,
  movedSourceRow,
  recordedSourceRow,
  remapAuditValues,
  type SourceRow,
  toSource,
} from "../rows.ts";
import type {
  MovedDelivery,
  RemapAudit,
  SourceDelivery,
  SourceDeliveryFilter,
  SourceDeliveryInput,
  SourceDeliveryLog,
} from "../source-port.ts";
import type { PostgresLink } from "./link.ts";

/** Tries of record's insert-then-select: only a purge between the two makes a second one. */
const RECORD_TRIES = 3;

/**
 * The platforms' deliveries in source_deliveries (migration 0006), shared by
 * every instance. Each method is one autocommit statement (record: up to two).
 * Times are the caller's: a delivery's received_at is when the gateway took
 * it, compared only with the retention's bound, itself on the caller's clock.
 */
export class PostgresSourceLog implements SourceDeliveryLog {
  readonly #link: PostgresLink;

  constructor(link: PostgresLink) {
    this.#link = link;
  }

  /**
   * Read committed: an insert that meets another transaction's uncommitted
   * row of the same key waits for its commit and does nothing; the SELECT, a
   * new statement, then sees that row.
   */
  async record(delivery: SourceDeliveryInput): Promise<SourceDelivery> {
    const db = this.#link.sql;
    const row = recordedSourceRow(delivery);
    for (let attempt = 0; attempt < RECORD_TRIES; attempt++) {
      const [inserted] = await this.#link.run(
        () => db<SourceRow[]>`INSERT INTO source_deliveries ${db(row)} ON CONFLICT DO NOTHING RETURNING *`,
      );
      if (inserted !== undefined) return toSource(inserted);
      const [kept] = await this.#link.run(
        () => db<SourceRow[]>`
          SELECT * FROM source_deliveries
           WHERE sender = ${row.sender} AND platform = ${row.platform} AND key = ${row.key} AND outcome = 'unmapped'`,
      );
      if (kept !== undefined) return toSource(kept);
    }
    throw new Error(`the delivery kept under ${delivery.platform} key ${delivery.key} keeps vanishing`);
  }

  async find(id: number): Promise<SourceDelivery | undefined> {
    const db = this.#link.sql;
    const [row] = await this.#link.run(() => db<SourceRow[]>`SELECT * FROM source_deliveries WHERE id = ${id}`);
    return row === undefined ? undefined : toSource(row);
  }

  async ofEvent(sender: string, eventId: string): Promise<SourceDelivery | undefined> {
    const db = this.#link.sql;
    // The accepted delivery first, then one remapped to the event.
    const [row] = await this.#link.run(
      () => db<SourceRow[]>`
        SELECT * FROM source_deliveries WHERE sender = ${sender} AND event_id = ${eventId}
         ORDER BY outcome = 'accepted' DESC, id LIMIT 1`,
    );
    return row === undefined ? undefined : toSource(row);
  }

  /** Only the filters given, so that the planner sees plain equalities (the outcome index). */
  async list(filter: SourceDeliveryFilter): Promise<SourceDelivery[]> {
    const db = this.#link.sql;
    const conditions = [
      filter.sender === undefined ? undefined : db`sender = ${filter.sender}`,
      filter.platform === undefined ? undefined : db`platform = ${filter.platform}`,
      filter.outcome === undefined ? undefined : db`outcome = ${filter.outcome}`,
      filter.beforeId === undefined ? undefined : db`id < ${filter.beforeId}`,
    ].filter((condition) => condition !== undefined);
    const where = conditions.reduce((sql, condition) => db`${sql} AND ${condition}`, db`TRUE`);
    const rows = await this.#link.run(
      () => db<SourceRow[]>`SELECT * FROM source_deliveries WHERE ${where} ORDER BY id DESC LIMIT ${filter.limit}`,
    );
    return rows.map(toSource);
  }

  async markRemapped(id: number, eventId: string, now: number, audit: RemapAudit): Promise<boolean> {
    const db = this.#link.sql;
    const { by, reason } = remapAuditValues(audit);
    const result = await this.#link.run(
      () => db`
        UPDATE source_deliveries
           SET event_id = ${eventId}, remapped_at = ${now}::bigint, remapped_by = ${by}, remap_reason = ${reason}
         WHERE id = ${id} AND outcome = 'unmapped' AND remapped_at IS NULL`,
    );
    return result.count > 0;
  }

  /** One batch; SKIP LOCKED and by ctid, as the events' purge (statements.ts, purge) says why. */
  async purge(request: { olderThan: number; batchSize: number }): Promise<number> {
    const result = await this.#link.maintain(
      (db) => db`
        DELETE FROM source_deliveries WHERE ctid = ANY (ARRAY(
          SELECT ctid FROM source_deliveries
           WHERE outcome = 'ignored' AND received_at < ${request.olderThan}::bigint
           LIMIT ${request.batchSize} FOR UPDATE SKIP LOCKED))`,
    );
    return result.count;
  }

  /** The primary key's range, oldest first, past the accepted rows. */
  async exportPage(request: { afterId: number; limit: number }): Promise<SourceDelivery[]> {
    const rows = await this.#link.maintain(
      (db) => db<SourceRow[]>`
        SELECT * FROM source_deliveries
         WHERE id > ${request.afterId} AND outcome <> 'accepted' ORDER BY id LIMIT ${request.limit}`,
    );
    return rows.map(toSource);
  }

  /**
   * One statement: an unmapped delivery already kept is the unique index's
   * conflict; an ignored one already there is found by its time in the
   * retention's index. The row travels as JSON typed by the table, as
   * importEvent's do (import-events.ts).
   */
  async importDelivery(delivery: MovedDelivery): Promise<"imported" | "present"> {
    const db = this.#link.sql;
    const row = movedSourceRow(delivery);
    const names = db.unsafe(MOVED_SOURCE_COLUMNS.join(", "));
    const values = db.unsafe(MOVED_SOURCE_COLUMNS.map((name) => `d.${name}`).join(", "));
    const inserted = await this.#link.maintain(
      (tx) => tx<{ id: number }[]>`
        INSERT INTO source_deliveries (${names})
        SELECT ${values} FROM json_populate_record(NULL::source_deliveries, ${JSON.stringify(row)}::text::json) AS d
         WHERE NOT EXISTS (
           SELECT 1 FROM source_deliveries kept
            WHERE kept.outcome = 'ignored' AND kept.received_at = d.received_at AND kept.outcome = d.outcome
              AND kept.sender = d.sender AND kept.platform = d.platform AND kept.key = d.key
              AND kept.correlation_id = d.correlation_id)
        ON CONFLICT DO NOTHING
        RETURNING id`,
    );
    return inserted.length > 0 ? "imported" : "present";
  }
}
