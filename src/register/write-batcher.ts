import type Database from "better-sqlite3";

export type JobResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Commits a batch of jobs and says how each ended; throws (or rejects) when nothing of it is durable. */
export type CommitBatch<J> = (jobs: readonly J[]) => JobResult[] | Promise<JobResult[]>;

interface Queued<J> {
  job: J;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. Every write of the register is one small job; the jobs
 * submitted in one event-loop turn go together at its end, unless
 * `maxInFlight` batches are already committing: then they gather until one
 * of those is done, and go together at once. So one fsync makes a whole
 * batch durable, under load the batches grow instead of queueing fsyncs,
 * and no job is answered before its own batch's commit.
 */
export class WriteBatcher<J> {
  readonly #commit: CommitBatch<J>;
  readonly #maxBatch: number;
  #queue: Queued<J>[] = [];
  #scheduled = false;
  readonly #maxInFlight: number;
  readonly #committing = new Set<Promise<void>>();

  constructor(commit: CommitBatch<J>, maxBatch = 256, maxInFlight = 1) {
    this.#commit = commit;
    this.#maxBatch = maxBatch;
    this.#maxInFlight = maxInFlight;
  }

  submit(job: J): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ job, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Commits what is queued now rather than at the next turn. ReadBatcher
   * calls it after a batch of reads: a new event's reservation follows its
   * read in the same turn, and waiting one more turn would put one more
   * turn into every new event's answer time.
   */
  flushQueued(): void {
    if (this.#queue.length > 0) this.#flush();
  }

  /** Resolves when nothing is queued or committing: what close() waits for. */
  async idle(): Promise<void> {
    while (this.#committing.size > 0 || this.#queue.length > 0) {
      this.#flush();
      await Promise.all(this.#committing);
    }
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // After the I/O callbacks of this turn: requests that arrived together commit together.
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    // The batch committing now takes the queue with it when it ends.
    if (this.#committing.size >= this.#maxInFlight) return;
    const batch = this.#queue.splice(0, this.#maxBatch);
    if (batch.length === 0) return;
    let results: JobResult[] | Promise<JobResult[]>;
    try {
      results = this.#commit(batch.map((queued) => queued.job));
    } catch (error) {
      // BEGIN or COMMIT failed (busy past the timeout, disk full, I/O): nothing of the batch is durable.
      results = Promise.reject(error);
    }
    if (Array.isArray(results)) {
      answer(batch, results);
      if (this.#queue.length > 0) this.#schedule();
      return;
    }
    const committing = results.then(
      (done) => answer(batch, done),
      (error: unknown) => {
        for (const queued of batch) queued.reject(error);
      },
    );
    this.#committing.add(committing);
    void committing.then(() => {
      this.#committing.delete(committing);
      this.flushQueued();
    });
  }
}

function answer<J>(batch: readonly Queued<J>[], results: readonly JobResult[]): void {
  batch.forEach((queued, index) => {
    const result = results[index];
    if (result?.ok) queued.resolve(result.value);
    else queued.reject(result?.error);
  });
}

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
