import type Database from "better-sqlite3";
import type { JobResult } from "../write-batcher.ts";

/**
 * The commit of one batch on a connection: BEGIN IMMEDIATE, each job in its
 * own savepoint (a job that throws is undone alone and fails alone), COMMIT.
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
        return { ok: false, error };
      }
    }),
  );
  return (jobs) => batch.immediate(jobs);
}
