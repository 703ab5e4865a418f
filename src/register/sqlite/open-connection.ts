import Database from "better-sqlite3";

/**
 * Opens a connection to the register's file with the pragmas every connection needs (WAL, an fsync
 * per commit, foreign keys), then `setup` (the migrations, for the register's own connection).
 *
 * Two processes starting at once on a new file race to turn it into WAL, and the loser can get
 * SQLITE_BUSY at once: SQLite does not call its busy handler for every lock this takes (the
 * journal-mode change, WAL recovery). So the whole sequence is tried again, with growing pauses,
 * until `busyTimeoutMs` has passed, as the busy handler would have waited. Anything but busy is
 * thrown at once.
 */
export function openConnection(
  file: string,
  busyTimeoutMs: number,
  setup: (db: Database.Database) => void = () => {},
): Database.Database {
  const deadline = Date.now() + busyTimeoutMs;
  for (let pauseMs = 5; ; pauseMs = Math.min(pauseMs * 2, 100)) {
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: busyTimeoutMs });
      db.pragma("journal_mode = WAL");
      // A 2xx promises the event survives power loss: fsync every commit.
      db.pragma("synchronous = FULL");
      db.pragma("foreign_keys = ON");
      // Each write job runs in a savepoint, whose undo copies of the pages it touches (the sub-journal)
      // went to a temporary file: a write() per page, a tenth of the writer's CPU per new event (and more
      // for a platform's delivery). They are never read after a crash (the WAL is), so memory holds them.
      db.pragma("temp_store = MEMORY");
      setup(db);
      return db;
    } catch (error) {
      db?.close();
      if (!isBusy(error) || Date.now() + pauseMs > deadline) throw error;
      // Start-up only, and synchronous like the rest of opening: nothing else runs yet to be held up.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs);
    }
  }
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith("SQLITE_BUSY");
}
