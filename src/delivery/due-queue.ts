import type { AttemptKind } from "../register/port.ts";

/**
 * What the deliverer's last claims found of the queue of due events. A claim
 * that came back short says nothing more of its kind is due, and none is
 * asked for again until something may have become due: a change notice, the
 * poll, a claim given back, 1C recovering. Without it every call's end asked
 * again, a write transaction that a request waiting for 1C then queued
 * behind. Just-in-time and ahead claims are told apart: an ahead claim passes
 * over events it may not take (a lost ahead attempt), which are still due.
 */
export class DueQueue {
  readonly #dry: Record<AttemptKind, boolean> = { just_in_time: false, ahead: false };
  /** Counts what may have made events due: a claim under way when one came must not mark the queue dry. */
  #changes = 0;

  isDry(kind: AttemptKind): boolean {
    return this.#dry[kind];
  }

  mayBeDue(): void {
    this.#dry.just_in_time = false;
    this.#dry.ahead = false;
    this.#changes++;
  }

  /** Runs a claim for up to `limit` due events of `kind`, and learns from how many it got. */
  async claim<T>(kind: AttemptKind, limit: number, run: () => Promise<T[]>): Promise<T[]> {
    const before = this.#changes;
    const claims = await run();
    if (claims.length < limit && before === this.#changes) this.#dry[kind] = true;
    return claims;
  }
}
