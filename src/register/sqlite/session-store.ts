import type Database from "better-sqlite3";
import type { ConsoleSession, SessionStore } from "../port.ts";

/** A row of console_sessions (migration 2), as SQLite returns it. */
interface SessionRow {
  id_digest: string;
  operator: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

type SessionStatements = ReturnType<typeof prepareSessionStatements>;

/** The SQL of the console's sessions, prepared once per connection. */
function prepareSessionStatements(db: Database.Database) {
  return {
    insert: db.prepare(`
      INSERT INTO console_sessions (id_digest, operator, csrf_token, created_at, expires_at)
      VALUES (@idDigest, @operator, @csrfToken, @createdAt, @expiresAt)`),
    // A session is over at its expiry instant, whether or not the purge has removed it yet.
    select: db.prepare(`
      SELECT id_digest, operator, csrf_token, created_at, expires_at FROM console_sessions
       WHERE id_digest = @idDigest AND expires_at > @now`) as Database.Statement<unknown[], SessionRow>,
    delete: db.prepare("DELETE FROM console_sessions WHERE id_digest = @idDigest"),
    purgeExpired: db.prepare("DELETE FROM console_sessions WHERE expires_at <= @now"),
  };
}

/** How the register lets the store touch the database: writes by group commit, reads directly. */
export interface SessionStorage {
  write<T>(work: () => T): Promise<T>;
  read<T>(work: () => T): T;
}

/**
 * The console's sessions in the register's SQLite file: every gateway process
 * on that file sees a sign-in or a sign-out as soon as it is committed.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #sql: SessionStatements;
  readonly #storage: SessionStorage;

  constructor(db: Database.Database, storage: SessionStorage) {
    this.#sql = storage.read(() => prepareSessionStatements(db));
    this.#storage = storage;
  }

  async create(session: ConsoleSession): Promise<void> {
    const { idDigest, operator, csrfToken, createdAt, expiresAt } = session;
    await this.#storage.write(() => this.#sql.insert.run({ idDigest, operator, csrfToken, createdAt, expiresAt }));
  }

  async find(idDigest: string, now: number): Promise<ConsoleSession | undefined> {
    const row = this.#storage.read(() => this.#sql.select.get({ idDigest, now }));
    return row === undefined ? undefined : toSession(row);
  }

  async delete(idDigest: string): Promise<void> {
    await this.#storage.write(() => this.#sql.delete.run({ idDigest }));
  }

  async purgeExpired(now: number): Promise<number> {
    return this.#storage.write(() => this.#sql.purgeExpired.run({ now }).changes);
  }
}

function toSession(row: SessionRow): ConsoleSession {
  return {
    idDigest: row.id_digest,
    operator: row.operator,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}
