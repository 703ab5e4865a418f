import { columnNames, SESSION_COLUMNS, type SessionRow, toSession } from "../rows.ts";
import {
  type ConsoleSession,
  type NewConsoleSession,
  SESSION_USE_STEP_MS,
  type SessionStore,
} from "../session-port.ts";
import type { PostgresLink } from "./link.ts";
import type { ClockSource } from "./statements.ts";

/** A session's own columns: `live` carries its `now` besides. */
const SESSION_SELECT = columnNames(SESSION_COLUMNS).join(", ");

/**
 * The console's sessions in console_sessions (migration 0004), shared by every
 * instance on the database: a sign-out is gone everywhere at its commit. Each
 * method is one autocommit statement. Times are stamped and compared on the
 * database's clock, like leases and due times, so instances with skewed
 * clocks agree on when a session ends; on clock "node", on the caller's.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #link: PostgresLink;
  readonly #clock: ClockSource;

  constructor(link: PostgresLink, clock: ClockSource) {
    this.#link = link;
    this.#clock = clock;
  }

  async create(session: NewConsoleSession, now: number): Promise<ConsoleSession> {
    const db = this.#link.sql;
    const rows = await this.#link.run(
      () => db<SessionRow[]>`
        INSERT INTO console_sessions
               (id_digest, operator, credential_digest, csrf_token, created_at, expires_at, last_used_at, idle_ms)
        SELECT ${session.idDigest}, ${session.operator}, ${session.credentialDigest}, ${session.csrfToken},
               at.now, at.now + ${session.maxMs}::bigint, at.now, ${session.idleMs}
          FROM (SELECT ${this.#now(now)} AS now) AS at
        RETURNING *`,
    );
    const created = rows[0];
    if (created === undefined) throw new Error("INSERT … RETURNING returned no row");
    return toSession(created);
  }

  async find(idDigest: string, now: number): Promise<ConsoleSession | undefined> {
    const db = this.#link.sql;
    // One round trip: the live row, and its use written only once the recorded one is a step old.
    const rows = await this.#link.run(
      () => db<(SessionRow & { used_at: number | null })[]>`
        WITH live AS (
          SELECT *, ${this.#now(now)} AS now FROM console_sessions
           WHERE id_digest = ${idDigest} AND ${this.#live(now)}
        ), used AS (
          UPDATE console_sessions AS s SET last_used_at = live.now
            FROM live
           WHERE s.id_digest = live.id_digest AND live.now - live.last_used_at >= ${SESSION_USE_STEP_MS}
          RETURNING s.last_used_at
        )
        SELECT ${db.unsafe(SESSION_SELECT)}, (SELECT last_used_at FROM used) AS used_at FROM live`,
    );
    const found = rows[0];
    if (found === undefined) return undefined;
    const { used_at, ...row } = found;
    const session = toSession(row);
    return used_at === null ? session : { ...session, lastUsedAt: used_at };
  }

  async delete(idDigest: string): Promise<void> {
    const db = this.#link.sql;
    await this.#link.run(() => db`DELETE FROM console_sessions WHERE id_digest = ${idDigest}`);
  }

  async purgeExpired(now: number): Promise<number> {
    const result = await this.#link.maintain((db) => db`DELETE FROM console_sessions WHERE NOT (${this.#live(now)})`);
    return result.count;
  }

  /** Live at `now`: before the absolute deadline and before the idle one. */
  #live(now: number) {
    return this.#link.sql`expires_at > ${this.#now(now)} AND last_used_at + idle_ms > ${this.#now(now)}`;
  }

  /** "Now" as SQL: the database's now() (the transaction's start, one value per statement), or the caller's. */
  #now(now: number) {
    return this.#clock === "database"
      ? this.#link.sql`(extract(epoch FROM now()) * 1000)::bigint`
      : this.#link.sql`${now}::bigint`;
  }
}
