/**
 * When a batch of writes commits on the event loop's own thread instead of
 * the writer thread. Handing a batch to the writer thread and back costs two
 * thread wake-ups, each 0.05–0.2 ms on a virtual machine whose idle CPUs
 * sleep: a lone request's two commits (the reservation, then 1C's outcome)
 * spend more time in those hand-offs than in their fsyncs. A quiet gateway
 * therefore commits small batches where they are made, and a busy one on the
 * writer thread, where an fsync never holds up parsing and answering.
 *
 * "Quiet" is decided here, from the batch and the recent past only:
 * - the writer thread has nothing in flight (writes stay in order);
 * - the batch is small (under load batches grow, and go to the thread);
 * - the event loop spent less than `maxShare` of the current window in such
 *   commits (a steady trickle of small batches cannot take the loop over);
 * - such commits have not been slow lately: a disk whose fsync takes
 *   milliseconds now would stall every request, so the thread takes
 *   everything for a while (one slow fsync among fast ones is the disk's
 *   noise, and counts for a fifth);
 * - one batch in every `maxInARow + 1` goes to the thread all the same: the
 *   event loop's connection never checkpoints the WAL (that copies pages to
 *   the database file and fsyncs it, milliseconds), the thread's does, after
 *   a commit of its own once the WAL is long enough.
 */

export interface QuietCommitLimits {
  /** The largest batch committed on the event loop. */
  maxJobs: number;
  /** The window the event loop's share is counted over, ms. */
  windowMs: number;
  /** The share of a window the event loop may spend committing. */
  maxShare: number;
  /** When commits here take this long, ms, on a running mean, every batch goes to the writer thread for `pauseMs`. */
  slowMs: number;
  pauseMs: number;
  /** Commits on the event loop between two on the writer thread. */
  maxInARow: number;
}

export const QUIET_COMMIT_LIMITS: QuietCommitLimits = {
  // A waiting request's reservation with its expedited claim is 2; a few shops at once, a few more.
  maxJobs: 4,
  windowMs: 100,
  // At most half the loop's time in commits, whatever the traffic: back-to-back lone requests take 35–45 %.
  maxShare: 0.5,
  // This machine's commits take 0.15–0.5 ms; 5 ms is a disk in trouble.
  slowMs: 5,
  // Then one commit a second tries again, while the disk stays slow.
  pauseMs: 1000,
  // About 10 pages a batch: the thread sees the WAL every 300 pages or so, well before its 1 000-page checkpoint.
  maxInARow: 32,
};

/** The running mean's weight for the newest commit. */
const MEAN_WEIGHT = 0.2;

export class QuietCommits {
  readonly #limits: QuietCommitLimits;
  readonly #now: () => number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #spentMs = 0;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  #inARow = 0;
  #meanMs = 0;

  constructor(limits: QuietCommitLimits = QUIET_COMMIT_LIMITS, now: () => number = () => performance.now()) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Whether a batch of `jobs` may commit on the event loop now. */
  allows(jobs: number, threadBusy: boolean): boolean {
    const allowed =
      !threadBusy && jobs <= this.#limits.maxJobs && this.#inARow < this.#limits.maxInARow && this.#quiet();
    if (!allowed) this.#inARow = 0;
    return allowed;
  }

  /** A commit on the event loop took `ms`: counted against the window and the running mean. */
  took(ms: number): void {
    this.#inARow++;
    this.#spentMs += ms;
    this.#meanMs += (ms - this.#meanMs) * MEAN_WEIGHT;
    if (this.#meanMs > this.#limits.slowMs) {
      this.#pausedUntil = this.#now() + this.#limits.pauseMs;
      // After the pause, one fast commit is enough to go on.
      this.#meanMs = this.#limits.slowMs;
    }
  }

  #quiet(): boolean {
    const now = this.#now();
    if (now < this.#pausedUntil) return false;
    if (now - this.#windowStart >= this.#limits.windowMs) {
      this.#windowStart = now;
      this.#spentMs = 0;
    }
    return this.#spentMs < this.#limits.windowMs * this.#limits.maxShare;
  }
}
