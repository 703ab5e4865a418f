import type { ConsoleSession, SessionStore } from "../port.ts";
import type { Db } from "./statements.ts";
import { storage } from "./storage-errors.ts";

/**
 * The console's sessions in console_sessions (migration 0003), shared by every
 * instance on the database: a sign-out is gone everywhere at its commit. Each
 * method is one autocommit statement. Times are the caller's (epoch ms): an
 * expiry is compared with the clock that set it.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async create(session: ConsoleSession): Promise<void> {
    const db = this.#db;
    await storage(
      () => db`
        INSERT INTO console_sessions (id_digest, operator, csrf_token, created_at, expires_at)
        VALUES (${session.idDigest}, ${session.operator}, ${session.csrfToken}, ${session.createdAt},
                ${session.expiresAt})`,
    );
  }

  async find(idDigest: string, now: number): Promise<ConsoleSession | undefined> {
    const db = this.#db;
    // A session is over at its expiry instant, whether or not the purge has removed it yet.
    const rows = await storage(
      () => db<ConsoleSession[]>`
        SELECT id_digest AS "idDigest", operator, csrf_token AS "csrfToken", created_at AS "createdAt",
               expires_at AS "expiresAt"
          FROM console_sessions WHERE id_digest = ${idDigest} AND expires_at > ${now}`,
    );
    return rows[0];
  }

  async delete(idDigest: string): Promise<void> {
    const db = this.#db;
    await storage(() => db`DELETE FROM console_sessions WHERE id_digest = ${idDigest}`);
  }

  async purgeExpired(now: number): Promise<number> {
    const db = this.#db;
    const result = await storage(() => db`DELETE FROM console_sessions WHERE expires_at <= ${now}`);
    return result.count;
  }
}
