import type Database from "better-sqlite3";

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Read grouping, the reading twin of WriteBatcher. In WAL mode every
 * autocommit SELECT opens and ends a read transaction of its own: a read
 * lock taken and dropped on the -shm file and the file's size looked up,
 * three system calls that cost more than a lookup by primary key. The
 * reads submitted in one turn of the event loop run in one deferred
 * transaction instead: one snapshot of committed rows, no write lock, so
 * they never wait for another process's writer. Each read fails alone.
 */
export class ReadBatcher {
  readonly #runBatch: (jobs: readonly Job[]) => void;
  readonly #then: (() => void) | undefined;
  readonly #maxBatch: number;
  #queue: Job[] = [];
  #scheduled = false;

  /**
   * `then` runs just after each batch, once the code awaiting its reads has
   * run as far as it can (WriteBatcher.flushQueued: the writes those reads
   * led to commit in this turn, not the next).
   */
  constructor(db: Database.Database, then?: () => void, maxBatch = 256) {
    this.#then = then;
    this.#maxBatch = maxBatch;
    // BEGIN DEFERRED takes no lock until the first read, and then only a read lock.
    const batch = db.transaction((jobs: readonly Job[]) => {
      for (const job of jobs) {
        try {
          job.resolve(job.work());
        } catch (error) {
          job.reject(error);
        }
      }
    });
    this.#runBatch = (jobs) => batch.deferred(jobs);
  }

  submit<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // After the I/O callbacks of this turn: requests that arrived together read together.
    setImmediate(() => this.#flush());
    // Queued now, it runs in this same turn after the flush and after the promise
    // callbacks the flush set off; queued from inside the flush, it would wait a turn.
    const then = this.#then;
    if (then !== undefined) setImmediate(then);
  }

  #flush(): void {
    this.#scheduled = false;
    const jobs = this.#queue.splice(0, this.#maxBatch);
    if (this.#queue.length > 0) this.#schedule();
    if (jobs.length === 0) return;
    try {
      this.#runBatch(jobs);
    } catch (error) {
      // BEGIN or COMMIT failed (the connection closed): a promise already settled ignores this.
      for (const job of jobs) job.reject(error);
    }
  }
}
