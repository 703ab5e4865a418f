/**
 * 1C's managed locks on an event's key, as far as a caller can see them: a
 * POST posts its order inside a transaction holding the key's exclusive lock,
 * and GET /v1/events/{key} reads under a shared one, so it waits for an order
 * still being created instead of answering 404 before its commit. A wait
 * longer than 1C's lock timeout fails (the GET then answers 503).
 */
export class KeyLocks {
  /** The end of the last transaction on each key: the next one starts after it. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Waits for the key's earlier holders, then holds it until the returned release is called. */
  async acquire(key: string): Promise<() => void> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => held);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    await before;
    return release;
  }

  /** Whether the key came free within `waitMs` (a shared lock's wait); true at once when nobody holds it. */
  async freeWithin(key: string, waitMs: number, signal: AbortSignal): Promise<boolean> {
    const tail = this.#tails.get(key);
    if (tail === undefined) return true;
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    const timedOut = new Promise<false>((resolve) => {
      onAbort = () => resolve(false);
      timer = setTimeout(onAbort, waitMs);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([tail.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }
}
