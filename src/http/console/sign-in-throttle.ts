/**
 * Failed sign-ins per client address in a fixed window. Tokens are 32+
 * random characters, so guessing is hopeless anyway; this keeps a script
 * from filling the logs and the CPU with attempts. Per process, in memory:
 * enough for that purpose, and nothing to clean up on restart.
 */
export class SignInThrottle {
  readonly #failures = new Map<string, { count: number; resetAt: number }>();
  readonly #max: number;
  readonly #windowMs: number;

  constructor(options: { maxFailures: number; windowMs: number }) {
    this.#max = options.maxFailures;
    this.#windowMs = options.windowMs;
  }

  /** Milliseconds until `client` may try again, or 0 when it may now. */
  waitMs(client: string, now: number): number {
    const entry = this.#failures.get(client);
    if (entry === undefined || entry.resetAt <= now) return 0;
    return entry.count >= this.#max ? entry.resetAt - now : 0;
  }

  failed(client: string, now: number): void {
    this.#forgetExpired(now);
    const entry = this.#failures.get(client);
    if (entry === undefined || entry.resetAt <= now)
      this.#failures.set(client, { count: 1, resetAt: now + this.#windowMs });
    else entry.count += 1;
  }

  /** Bounded memory: entries whose window has passed say nothing any more. */
  #forgetExpired(now: number): void {
    if (this.#failures.size < 1000) return;
    for (const [client, entry] of this.#failures) if (entry.resetAt <= now) this.#failures.delete(client);
  }
}
