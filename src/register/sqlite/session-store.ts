import type Database from "better-sqlite3";
import { toSession } from "../rows.ts";
import type { ConsoleSession, NewConsoleSession, SessionStore } from "../session-port.ts";
import { prepareSessionStatements, type SessionStatements, useIsStale } from "./session-statements.ts";
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

  async create(session: NewConsoleSession, now: number): Promise<ConsoleSession> {
    return toSession(await this.#storage.write("createSession", { session, now }));
  }

  async find(idDigest: string, now: number): Promise<ConsoleSession | undefined> {
    const row = this.#storage.read(() => this.#select.get({ idDigest, now }));
    if (row === undefined) return undefined;
    const session = toSession(row);
    if (!useIsStale(session.lastUsedAt, now)) return session;
    await this.#storage.write("touchSession", { idDigest, now });
    return { ...session, lastUsedAt: now };
  }

  async delete(idDigest: string): Promise<void> {
    await this.#storage.write("deleteSession", { idDigest });
  }

  async purgeExpired(now: number): Promise<number> {
    return this.#storage.write("purgeSessions", { now });
  }
}
