import type Database from "better-sqlite3";

type JobResult = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. Every write of the register is one small synchronous job; the
 * jobs submitted in the same turn of the event loop run in one
 * BEGIN IMMEDIATE … COMMIT, so one fsync makes all of them durable, and none
 * is answered before that commit. Each job runs in its own savepoint: a job
 * that throws is undone alone and rejects alone.
 */
export class WriteBatcher {
  readonly #runBatch: (jobs: readonly Job[]) => JobResult[];
  readonly #maxBatch: number;
  #queue: Job[] = [];
  #scheduled = false;

  constructor(db: Database.Database, maxBatch = 256) {
    this.#maxBatch = maxBatch;
    // Called inside the batch's transaction, better-sqlite3 makes this a SAVEPOINT.
    const inSavepoint = db.transaction((work: () => unknown) => work());
    const batch = db.transaction((jobs: readonly Job[]) =>
      jobs.map((job): JobResult => {
        try {
          return { ok: true, value: inSavepoint(job.work) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
    this.#runBatch = (jobs) => batch.immediate(jobs);
  }

  submit<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /**
   * Commits what is queued now rather than at the next turn. ReadBatcher
   * calls it after a batch of reads: a new event's reservation follows its
   * read in the same turn, and waiting one more turn would put one more
   * commit (an fsync) into every new event's answer time.
   */
  flushQueued(): void {
    if (this.#queue.length > 0) this.#flush();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // After the I/O callbacks of this turn: requests that arrived together commit together.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const jobs = this.#queue.splice(0, this.#maxBatch);
    if (this.#queue.length > 0) this.#schedule();
    if (jobs.length === 0) return;
    let results: JobResult[];
    try {
      results = this.#runBatch(jobs);
    } catch (error) {
      // BEGIN or COMMIT failed (busy past the timeout, disk full, I/O): nothing of the batch is durable.
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, index) => {
      const result = results[index];
      if (result?.ok) job.resolve(result.value);
      else job.reject(result?.error);
    });
  }
}
