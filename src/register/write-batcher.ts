export type JobResult<R = unknown> = { ok: true; value: R } | { ok: false; error: unknown };

/** Commits a batch of jobs and says how each ended; throws (or rejects) when nothing of it is durable. */
export type CommitBatch<J, R = unknown> = (jobs: readonly J[]) => JobResult<R>[] | Promise<JobResult<R>[]>;

interface Queued<J, R> {
  job: J;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit, on both backends. Every write of the register is one small
 * job; the jobs submitted in one event-loop turn go together at its end,
 * unless `maxInFlight` batches are already committing: then they gather
 * until one of those is done, and go together at once. So one commit (one
 * fsync, one WAL flush) makes a whole batch durable, under load the batches
 * grow instead of queueing commits, and no job is answered before its own
 * batch's commit. SQLite's ReadBatcher groups reads with it too.
 */
export class WriteBatcher<J, R = unknown> {
  readonly #commit: CommitBatch<J, R>;
  readonly #maxBatch: number;
  #queue: Queued<J, R>[] = [];
  #scheduled = false;
  readonly #maxInFlight: number;
  readonly #committing = new Set<Promise<void>>();
  readonly #afterEachBatch: (() => void) | undefined;

  /**
   * `afterEachBatch` runs just after each batch, once the code awaiting its
   * jobs has run as far as it can (ReadBatcher's use, WriteBatcher.flushQueued:
   * the writes a batch of reads led to commit in this turn, not the next).
   */
  constructor(commit: CommitBatch<J, R>, maxBatch = 256, maxInFlight = 1, afterEachBatch?: () => void) {
    this.#commit = commit;
    this.#maxBatch = maxBatch;
    this.#maxInFlight = maxInFlight;
    this.#afterEachBatch = afterEachBatch;
  }

  submit(job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
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
    // Queued now, it runs in this same turn after the flush and after the promise
    // callbacks the flush set off; queued from inside the flush, it would wait a turn.
    if (this.#afterEachBatch !== undefined) setImmediate(this.#afterEachBatch);
  }

  #flush(): void {
    // When maxInFlight batches are committing, the first to end takes the queue with it.
    while (this.#committing.size < this.#maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      let results: JobResult<R>[] | Promise<JobResult<R>[]>;
      try {
        results = this.#commit(batch.map((queued) => queued.job));
      } catch (error) {
        // BEGIN or COMMIT failed (busy past the timeout, disk full, I/O): nothing of the batch is durable.
        results = Promise.reject(error);
      }
      if (Array.isArray(results)) {
        answer(batch, results);
        // A synchronous commit held the event loop: the rest waits for the next turn.
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
}

/** The answers of a batch whose jobs succeed or fail together: one statement, or one transaction, for all. */
export function allSucceeded<R>(values: readonly R[]): JobResult<R>[] {
  return values.map((value) => ({ ok: true, value }));
}

function answer<J, R>(batch: readonly Queued<J, R>[], results: readonly JobResult<R>[]): void {
  batch.forEach((queued, index) => {
    const result = results[index] ?? { ok: false, error: new Error("the batch gave no answer for this job") };
    if (result.ok) queued.resolve(result.value);
    else queued.reject(result.error);
  });
}
