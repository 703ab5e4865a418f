import type Database from "better-sqlite3";
import type { SessionRow } from "../rows.ts";
import { type NewConsoleSession, SESSION_USE_STEP_MS } from "../session-port.ts";

/**
 * The console's sessions in SQL (migration 0004), and their writes as named
 * operations for the writer (write-ops.ts takes them in with the rest). On the
 * process clock: every instance on one file runs on one machine.
 */

export type SessionStatements = ReturnType<typeof prepareSessionStatements>;

/** Live at @now: before the absolute deadline and before the idle one. */
const LIVE = "expires_at > @now AND last_used_at + idle_ms > @now";

/** The SQL of the console's sessions, prepared once per connection. */
export function prepareSessionStatements(db: Database.Database) {
  return {
    insert: db.prepare(`
      INSERT INTO console_sessions
             (id_digest, operator, credential_digest, csrf_token, created_at, expires_at, last_used_at, idle_ms)
      VALUES (@idDigest, @operator, @credentialDigest, @csrfToken, @now, @now + @maxMs, @now, @idleMs)
      RETURNING *`) as Database.Statement<unknown[], SessionRow>,
    // A session is over at either deadline, whether or not the purge has removed it yet.
    select: db.prepare(`
      SELECT * FROM console_sessions WHERE id_digest = @idDigest AND ${LIVE}`) as Database.Statement<
      unknown[],
      SessionRow
    >,
    // Never backwards: another instance may have recorded a later use.
    touch: db.prepare(`
      UPDATE console_sessions SET last_used_at = @now
       WHERE id_digest = @idDigest AND last_used_at < @now AND ${LIVE}`),
    delete: db.prepare("DELETE FROM console_sessions WHERE id_digest = @idDigest"),
    purgeExpired: db.prepare(`DELETE FROM console_sessions WHERE NOT (${LIVE})`),
  };
}

/** Only a session's statements: what a session write needs of the writer's connection. */
interface WithSessions {
  sessions: SessionStatements;
}

/** The session writes, run by the writer like every other write (write-ops.ts). */
export const sessionWriteOps = {
  createSession(sql: WithSessions, request: { session: NewConsoleSession; now: number }): SessionRow {
    const row = sql.sessions.insert.get({ ...request.session, now: request.now });
    if (row === undefined) throw new Error("INSERT … RETURNING returned no row");
    return row;
  },

  touchSession(sql: WithSessions, request: { idDigest: string; now: number }): null {
    sql.sessions.touch.run(request);
    return null;
  },

  deleteSession(sql: WithSessions, { idDigest }: { idDigest: string }): null {
    sql.sessions.delete.run({ idDigest });
    return null;
  },

  purgeSessions(sql: WithSessions, { now }: { now: number }): number {
    return sql.sessions.purgeExpired.run({ now }).changes;
  },
};

/** Whether a find at `now` should write the session's use: only once the recorded one is a step old. */
export function useIsStale(lastUsedAt: number, now: number): boolean {
  return now - lastUsedAt >= SESSION_USE_STEP_MS;
}
