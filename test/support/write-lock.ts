import Database from "better-sqlite3";

/**
 * Runs `work` while another connection on the SQLite file holds its write
 * lock (BEGIN IMMEDIATE), as a second gateway's transaction or a CLI would:
 * reads go on (WAL), writes wait for the lock.
 */
export async function withWriteLockOn<T>(file: string, work: () => Promise<T>): Promise<T> {
  const other = new Database(file);
  other.exec("BEGIN IMMEDIATE");
  try {
    return await work();
  } finally {
    other.exec("ROLLBACK");
    other.close();
  }
}
