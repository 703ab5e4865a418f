import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { BackendStatements } from "../backend.ts";
import { readMigrations } from "../migrations.ts";
import { StorageUnavailableError } from "../port.ts";
import { LocalChangeFeed, RegisterCore } from "../register-core.ts";
import { openConnection } from "./open-connection.ts";
import { ReadBatcher } from "./read-batcher.ts";
import { SqliteSessionStore } from "./session-store.ts";
import { SqliteSourceLog } from "./source-store.ts";
import { filterParams, prepareStatements, purgeBindings } from "./statements.ts";
import type { Durability, WriteRunner } from "./write-ops.ts";
import { openWriter } from "./writer.ts";

export interface SqliteRegisterOptions {
  /** How long a writer waits for another process's write lock before giving up (503). */
  busyTimeoutMs?: number;
}

/**
 * The register on SQLite; its SQL is in statements.ts, its writes in
 * write-ops.ts. Reads run on this thread's connection (WAL: they never wait
 * for a writer). Writes run in short BEGIN IMMEDIATE transactions on a
 * writer thread's connection (writer.ts), grouped so that one fsync commits
 * a whole batch while this thread goes on with the next requests (a quiet
 * process's small batches commit here, on a connection of their own); several
 * processes on one file serialise on SQLite's write lock instead of failing
 * on upgrade. No transaction is ever open while 1C is called.
 */
export class SqliteRegister extends RegisterCore {
  readonly #write: WriteRunner;

  constructor(file: string, options: SqliteRegisterOptions = {}) {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    const db = storage(() => openConnection(file, busyTimeoutMs, migrate));
    const sql = prepareStatements(db);
    const writer = openWriter(db, { file, busyTimeoutMs });
    // Every request's first read (a repeat is answered from it): grouped per turn, see ReadBatcher.
    const reads = new ReadBatcher(db, () => writer.flushQueued());
    /** Every write goes through group commit: answered only after its batch is durable. */
    const write: WriteRunner = (op, args) => writer.run(op, args).catch(rethrowAsStorageError);
    const read = async <T>(work: () => T): Promise<T> => storage(work);
    const backend: BackendStatements = {
      queue: {
        reserve: (request) => write("reserve", request),
        claim: (request) => write("claim", request),
        settle: (lease, settlement, report, now) => write("settle", { lease, settlement, report, now }),
        bringForward: (now) => write("bringForward", { now }),
        replay: (request) => write("replay", request),
      },
      store: {
        find: (sender, eventId) => reads.submit(() => sql.select.get(sender, eventId)).catch(rethrowAsStorageError),
        findByEventId: (eventId) => read(() => sql.selectByEventId.all(eventId)),
        list: (filter) => read(() => sql.list.all(filterParams(filter))),
        page: (filter) => read(() => sql.page.all(filterParams(filter))),
        search: (term, limit) => read(() => sql.search.all({ term, limit })),
        countByStatus: (filter) => read(() => sql.countByStatus.all(filterParams(filter))),
        backlog: () => read(() => sql.backlog.get() ?? { pending: 0, oldestPendingReceivedAt: null, failedFinal: 0 }),
      },
      audit: {
        attempts: (sender, eventId) => read(() => sql.selectAttempts.all(sender, eventId)),
        replays: (sender, eventId) => read(() => sql.selectReplays.all(sender, eventId)),
      },
      maintenance: {
        purge: (request) => write("purgeFinished", request),
        countFinished: (bound) => read(() => sql.countFinished.get(purgeBindings(bound))?.count ?? 0),
        // Its own savepoint in the batch: a snapshot that fails leaves nothing of itself.
        importEvent: (rows) => write("importEvent", rows),
      },
      sessions: new SqliteSessionStore(db, { write, read: storage }),
      sources: new SqliteSourceLog(db, { write, read: storage }),
      feed: new LocalChangeFeed(),
      ping: async () => {
        await write("ping", Date.now());
      },
      close: async () => {
        await writer.close();
        if (db.open) db.close();
      },
    };
    super(backend);
    this.#write = write;
  }

  /** What the writing connection really runs with, for diagnostics: pragmas fail silently on some file systems. */
  durability(): Promise<Durability> {
    return this.#write("durability", null);
  }
}

/**
 * SQLite's own numbering, before both backends shared one (user_version, no
 * register_migrations): its 2 and 3 are today's 0003 and 0004. 0002 holds
 * nothing on SQLite, so a file at 2 or 3 has it too.
 */
const LEGACY_VERSIONS: Readonly<Record<number, readonly number[]>> = { 1: [1], 2: [1, 2, 3], 3: [1, 2, 3, 4] };

/**
 * Returns the names of the migrations applied now. Foreign keys are off while
 * they run (the pragma is a no-op inside a transaction, so it is set around
 * it): a migration that rebuilds a table (0009) drops the old one, and with
 * them on, that drop would first delete every attempt, replay and platform
 * delivery referring to it. Every key is checked before the commit instead,
 * as SQLite's documentation prescribes for such a change.
 */
function migrate(db: Database.Database): string[] {
  db.pragma("foreign_keys = OFF");
  try {
    return applyMigrations(db);
  } finally {
    db.pragma("foreign_keys = ON");
  }
}

function applyMigrations(db: Database.Database): string[] {
  const migrations = readMigrations("sqlite");
  // Several gateways may start at once on one file: the immediate transaction
  // makes the second wait and then see the versions the first one recorded.
  return db
    .transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS register_migrations (
                 version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
      const record = db.prepare("INSERT INTO register_migrations (version, name, applied_at) VALUES (?, ?, ?)");
      const done = new Set(db.prepare("SELECT version FROM register_migrations").pluck().all() as number[]);
      if (done.size === 0) {
        const legacy = LEGACY_VERSIONS[db.pragma("user_version", { simple: true }) as number] ?? [];
        for (const migration of migrations.filter((m) => legacy.includes(m.version))) {
          record.run(migration.version, migration.name, Date.now());
          done.add(migration.version);
        }
      }
      const applied: string[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        db.exec(migration.sql);
        record.run(migration.version, migration.name, Date.now());
        done.add(migration.version);
        applied.push(migration.name);
      }
      // Only after a change: the check reads every referring row.
      const broken = applied.length === 0 ? [] : (db.pragma("foreign_key_check") as unknown[]);
      if (broken.length > 0) throw new Error(`migrations left ${broken.length} rows without the row they refer to`);
      // Kept for tools that read it: the newest version applied.
      db.pragma(`user_version = ${Math.max(0, ...done)}`);
      return applied;
    })
    .immediate();
}

/** `gateway migrate` on SQLite: brings the file's schema up to date and says what it applied. */
export function migrateSqliteFile(file: string): string[] {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  let applied: string[] = [];
  const db = storage(() =>
    openConnection(file, 5000, (connection) => {
      applied = migrate(connection);
    }),
  );
  db.close();
  return applied;
}

/** SQLite failures (busy past the timeout, disk full, I/O, read-only, closed) mean "cannot accept now". */
function storage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw asStorageError(error);
  }
}

function rethrowAsStorageError(error: unknown): never {
  throw asStorageError(error);
}

function asStorageError(error: unknown): unknown {
  if (error instanceof Database.SqliteError || (error instanceof TypeError && /database/i.test(error.message))) {
    return new StorageUnavailableError(error.message, { cause: error });
  }
  return error;
}
