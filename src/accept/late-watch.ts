/**
 * Calls `late` for each watched operation still pending `afterMs` after it
 * started, with one timer for them all. A timer and a Promise.race per
 * request added 5–7 µs to awaiting the reservation, about what the skipped
 * read saves; a Set entry adds 2 µs. Operations are watched in the order
 * they start, so only the oldest ever needs looking at.
 */
export class LateWatch {
  readonly #afterMs: number;
  readonly #now: () => number;
  readonly #watched = new Set<Watched>();
  #timer: NodeJS.Timeout | undefined;

  constructor(afterMs: number, now: () => number = () => performance.now()) {
    this.#afterMs = afterMs;
    this.#now = now;
  }

  /** Watches one operation; the returned function says it ended, and is true if `late` was not called. */
  watch(late: () => void): () => boolean {
    const watched: Watched = { since: this.#now(), late };
    this.#watched.add(watched);
    this.#timer ??= setTimeout(() => this.#check(), this.#afterMs);
    return () => this.#watched.delete(watched);
  }

  #check(): void {
    this.#timer = undefined;
    const now = this.#now();
    for (const watched of this.#watched) {
      const left = watched.since + this.#afterMs - now;
      if (left > 0) {
        this.#timer = setTimeout(() => this.#check(), left);
        return;
      }
      this.#watched.delete(watched);
      watched.late();
    }
  }
}

interface Watched {
  since: number;
  late: () => void;
}
