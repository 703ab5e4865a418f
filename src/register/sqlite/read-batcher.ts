import type Database from "better-sqlite3";
import { type JobResult, WriteBatcher } from "../write-batcher.ts";

type Read = () => unknown;

/**
 * Read grouping, the reading twin of group commit. In WAL mode every
 * autocommit SELECT opens and ends a read transaction of its own: a read
 * lock taken and dropped on the -shm file and the file's size looked up,
 * three system calls that cost more than a lookup by primary key. The
 * reads submitted in one turn of the event loop run in one deferred
 * transaction instead: one snapshot of committed rows, no write lock, so
 * they never wait for another process's writer. Each read fails alone.
 */
export class ReadBatcher {
  readonly #batches: WriteBatcher<Read>;

  /** `then` runs just after each batch of reads (see WriteBatcher's afterEachBatch). */
  constructor(db: Database.Database, then?: () => void, maxBatch = 256) {
    // BEGIN DEFERRED takes no lock until the first read, and then only a read lock.
    const batch = db.transaction((reads: readonly Read[]) =>
      reads.map((read): JobResult => {
        try {
          return { ok: true, value: read() };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
    this.#batches = new WriteBatcher((reads) => batch.deferred(reads), maxBatch, 1, then);
  }

  submit<T>(work: () => T): Promise<T> {
    return this.#batches.submit(work) as Promise<T>;
  }
}
