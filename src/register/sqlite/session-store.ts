import type Database from "better-sqlite3";
import type { ConsoleSession, SessionStore } from "../port.ts";
import { prepareSessionStatements, type SessionRow, type SessionStatements } from "./statements.ts";
import type { WriteRunner } from "./write-ops.ts";

/** How the register lets the store touch the database: writes by group commit, reads directly. */
export interface SessionStorage {
  write: WriteRunner;
  read<T>(work: () => T): T;
}

/**
 * The console's sessions in the register's SQLite file: every gateway process
 * on that file sees a sign-in or a sign-out as soon as it is committed.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #select: SessionStatements["select"];
  readonly #storage: SessionStorage;

  constructor(db: Database.Database, storage: SessionStorage) {
    this.#select = storage.read(() => prepareSessionStatements(db).select);
    this.#storage = storage;
  }

  async create(session: ConsoleSession): Promise<void> {
    await this.#storage.write("createSession", session);
  }

  async find(idDigest: string, now: number): Promise<ConsoleSession | undefined> {
    const row = this.#storage.read(() => this.#select.get({ idDigest, now }));
    return row === undefined ? undefined : toSession(row);
  }

  async delete(idDigest: string): Promise<void> {
    await this.#storage.write("deleteSession", { idDigest });
  }

  async purgeExpired(now: number): Promise<number> {
    return this.#storage.write("purgeSessions", { now });
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
