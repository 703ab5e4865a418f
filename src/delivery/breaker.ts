/**
 * A circuit breaker for the one 1C target. Pure state machine over an injected
 * clock. While open the deliverer claims nothing, so waiting events keep their
 * attempt budget: an outage is not charged to them.
 *
 * The cooldown starts small and doubles while 1C stays down, up to a cap of a
 * few seconds: one probe per cap is no load on a 1C that is still down, and a
 * 1C that came back is found within the cap, not half a minute later.
 *
 *   closed ──N consecutive failures──▶ open ──cooldown──▶ half-open (one probe)
 *     ▲                                 ▲                     │
 *     └────────── probe succeeded ──────┼─────────────────────┘
 *                                       └──── probe failed (cooldown doubles, capped)
 */
export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

export class CircuitBreaker {
  readonly #options: BreakerOptions;
  readonly #now: () => number;
  #consecutiveFailures = 0;
  #openUntil = 0;
  #cooldownMs: number;
  #state: BreakerState = "closed";
  #probeInFlight = false;

  constructor(options: BreakerOptions, now: () => number) {
    this.#options = options;
    this.#now = now;
    this.#cooldownMs = options.cooldownMs;
  }

  get state(): BreakerState {
    if (this.#state === "open" && this.#now() >= this.#openUntil) this.#state = "half_open";
    return this.#state;
  }

  /** When an open breaker lets the next probe through. */
  get openUntil(): number | undefined {
    return this.#state === "open" ? this.#openUntil : undefined;
  }

  /** How many new attempts may start now. */
  permits(): number {
    switch (this.state) {
      case "closed":
        return Number.POSITIVE_INFINITY;
      case "open":
        return 0;
      case "half_open":
        return this.#probeInFlight ? 0 : 1;
    }
  }

  onStart(): void {
    if (this.state === "half_open") this.#probeInFlight = true;
  }

  /** Returns true when this success ended an outage (the breaker was not closed). */
  onSuccess(): boolean {
    const recovered = this.#state !== "closed";
    this.#consecutiveFailures = 0;
    this.#probeInFlight = false;
    this.#cooldownMs = this.#options.cooldownMs;
    this.#state = "closed";
    return recovered;
  }

  /**
   * A call that ended without saying how 1C is (its attempt failed on the
   * register before it got to report): if it was the probe, the next call may
   * probe. Otherwise a half-open breaker would wait for it forever.
   */
  onAbandoned(): void {
    this.#probeInFlight = false;
  }

  onFailure(): void {
    this.#consecutiveFailures += 1;
    if (this.#state === "half_open" || this.state === "half_open") {
      this.#probeInFlight = false;
      this.#cooldownMs = Math.min(this.#cooldownMs * 2, this.#options.maxCooldownMs);
      this.#open();
    } else if (this.#state === "closed" && this.#consecutiveFailures >= this.#options.failureThreshold) {
      this.#open();
    }
  }

  #open(): void {
    this.#state = "open";
    this.#openUntil = this.#now() + this.#cooldownMs;
  }
}
