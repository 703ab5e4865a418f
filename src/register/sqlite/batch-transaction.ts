import type Database from "better-sqlite3";
import type { JobResult } from "../write-batcher.ts";

/**
 * The commit of one batch on a connection: BEGIN IMMEDIATE, each job in its
 * own savepoint (a job that throws is undone alone and fails alone), COMMIT.
 * An error after which SQLite has rolled back the whole transaction (a disk
 * full or an I/O error while it spills its page cache) ends the batch: every
 * job fails, for the jobs before it are undone too, and a job after it
 * would run in a transaction of its own and commit apart from its batch.
 */
export function batchTransaction<J>(
  db: Database.Database,
  run: (job: J) => unknown,
): (jobs: readonly J[]) => JobResult[] {
  // Called inside the batch's transaction, better-sqlite3 makes this a SAVEPOINT.
  const inSavepoint = db.transaction((job: J) => run(job));
  const batch = db.transaction((jobs: readonly J[]) =>
    jobs.map((job): JobResult => {
      try {
        return { ok: true, value: inSavepoint(job) };
      } catch (error) {
        if (!db.inTransaction) throw error;
        return { ok: false, error };
      }
    }),
  );
  return (jobs) => batch.immediate(jobs);
}
