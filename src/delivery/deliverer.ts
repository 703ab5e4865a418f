import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import { EventStatus } from "../domain/event-status.ts";
import type { Claim, EventRecord } from "../register/port.ts";
import { type AttemptDeps, type AttemptOutcome, attemptDelivery } from "./attempt-delivery.ts";
import { type BreakerOptions, CircuitBreaker } from "./breaker.ts";

export interface DelivererOptions {
  /** Lease owner: unique per process. */
  owner: string;
  /** Calls to 1C in flight at once from this process: each holds a 1C session and licence. */
  concurrency: number;
  leaseMs: number;
  /** How often to look for events other processes committed, and for retries that came due. */
  pollMs: number;
  breaker: BreakerOptions;
}

export interface AttemptNotice {
  /** What 1C's answer came to, or lease_lost when a newer claim had taken the event over. */
  outcome: AttemptOutcome | "lease_lost";
  durationMs: number;
  record: EventRecord;
}

export interface DelivererEvents {
  /** An event's state changed after an attempt. */
  settled: [record: EventRecord];
  attempted: [notice: AttemptNotice];
}

/**
 * Owns delivery once an event is acknowledged: claims due events under
 * fenced leases, calls 1C at most `concurrency` at a time, writes each outcome,
 * and stops claiming while the breaker is open. Woken at once by commits in
 * this process; polls for the rest.
 */
export class Deliverer extends EventEmitter<DelivererEvents> {
  readonly #deps: AttemptDeps;
  readonly #options: DelivererOptions;
  readonly #breaker: CircuitBreaker;
  readonly #log: Logger;
  /** Attempts not yet finished, their outcome's write included: what stop() waits for. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Attempts still calling 1C: what the concurrency cap counts. */
  #calling = 0;
  /** The events of the attempts in flight: one already claimed here needs no expedited claim. */
  readonly #attempting = new Set<string>();
  readonly #expedite = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #unwatch: (() => void) | undefined;
  #pumping: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(deps: AttemptDeps, options: DelivererOptions) {
    super();
    this.setMaxListeners(0);
    this.#deps = deps;
    this.#options = options;
    this.#breaker = new CircuitBreaker(options.breaker, deps.now);
    this.#log = deps.log.child({ component: "deliverer", owner: options.owner });
  }

  get breakerState(): CircuitBreaker["state"] {
    return this.#breaker.state;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Whether a request should wait for an outcome: not while 1C is considered down. */
  get delivering(): boolean {
    return !this.#stopped && this.#breaker.state !== "open";
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    // An event recorded or replayed here is due at once, and a request here may be waiting for
    // it: take it ahead of the queue. Another instance's events, and retries made due by its
    // recovery from an outage, are claimed now too, but in batches, not one statement each.
    this.#unwatch = this.#deps.register.watch((change) => {
      if (change.kind === "settled") return;
      if (change.kind === "rescheduled" || change.remote === true) this.wake();
      else this.expedite(change.sender, change.eventId);
    });
    this.#timer = setInterval(() => this.wake(), this.#options.pollMs);
    this.wake();
  }

  /** Stops claiming and waits for the calls in flight to write their outcome. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unwatch?.();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#probeTimer);
    await this.#pumping;
    await this.idle();
  }

  /** Someone is waiting for this event: claim it ahead of the queue if there is room. */
  expedite(sender: string, eventId: string): void {
    this.#expedite.add(keyOf(sender, eventId));
    this.wake();
  }

  wake(): void {
    if (this.#stopped) return;
    void this.pump();
  }

  /** Claims what the breaker and the free slots allow, and starts those attempts. */
  pump(): Promise<void> {
    if (this.#pumping !== undefined) {
      this.#again = true;
      return this.#pumping;
    }
    this.#pumping = this.#fill()
      .catch((error: unknown) => this.#log.error({ err: error }, "claiming failed; will retry at the next poll"))
      .finally(() => {
        this.#pumping = undefined;
        if (this.#again && !this.#stopped) {
          this.#again = false;
          void this.pump();
        }
      });
    return this.#pumping;
  }

  /** Resolves when no claim is being made and no attempt is in flight. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0 || this.#pumping !== undefined) {
      await Promise.allSettled([...this.#inFlight, this.#pumping]);
    }
  }

  async #fill(): Promise<void> {
    // All at once, not one after another: on SQLite they share one commit, on PostgreSQL the pool's
    // connections. Those beyond the free slots are claimed with the rest when a slot frees. An event
    // already being attempted here (claimed meanwhile with all that is due) needs no claim of its own.
    const expedited = [...this.#expedite].filter((key) => !this.#attempting.has(key)).slice(0, this.#room());
    this.#expedite.clear();
    await Promise.all(
      expedited.map((key) => {
        const [sender, eventId] = splitKey(key);
        return this.#claimAndStart({ sender, eventId }, 1);
      }),
    );
    let room = this.#room();
    while (room > 0) {
      const claimed = await this.#claimAndStart(undefined, room);
      if (claimed < room) break;
      room = this.#room();
    }
  }

  #room(): number {
    if (this.#stopped) return 0;
    return Math.max(0, Math.min(this.#options.concurrency - this.#calling, this.#breaker.permits()));
  }

  async #claimAndStart(only: { sender: string; eventId: string } | undefined, limit: number): Promise<number> {
    const claims = await this.#deps.register.claim({
      owner: this.#options.owner,
      now: this.#deps.now(),
      leaseMs: this.#options.leaseMs,
      limit,
      ...(only === undefined ? {} : { only }),
    });
    for (const claim of claims) this.#start(claim);
    return claims.length;
  }

  #start(claim: Claim): void {
    const key = keyOf(claim.record.sender, claim.record.eventId);
    this.#attempting.add(key);
    this.#breaker.onStart();
    this.#calling++;
    let calling = true;
    // 1C is done with this attempt: the breaker learns how it went, and the slot goes to the next
    // claim, which is then written in the same group commit as this attempt's outcome.
    const callsDone = (onecAnswered: boolean | undefined): void => {
      if (!calling) return;
      calling = false;
      this.#calling--;
      if (onecAnswered === false) this.#recordFailure();
      else if (onecAnswered === true && this.#breaker.onSuccess()) this.#recovered();
      this.wake();
    };
    const running: Promise<void> = attemptDelivery(this.#deps, claim, callsDone)
      .then(({ record, outcome, leaseLost, durationMs }) => {
        if (!leaseLost && record.status === EventStatus.FAILED_FINAL) {
          this.#log.error(
            { event_id: record.eventId, sender: record.sender, error_class: record.lastErrorClass },
            `event stopped: ${record.lastError}`,
          );
        }
        this.emit("attempted", { outcome: leaseLost ? "lease_lost" : outcome, durationMs, record });
        this.emit("settled", record);
      })
      .catch((error: unknown) => {
        // Storage lost while writing the outcome: the lease expires and a later claim retries.
        this.#log.error({ err: error, event_id: claim.record.eventId }, "attempt outcome not written");
      })
      .finally(() => {
        callsDone(undefined);
        this.#attempting.delete(key);
        this.#inFlight.delete(running);
        this.wake();
      });
    this.#inFlight.add(running);
  }

  #recordFailure(): void {
    const before = this.#breaker.state;
    this.#breaker.onFailure();
    const reopenAt = this.#breaker.openUntil;
    if (reopenAt === undefined) return;
    if (before !== "open") this.#log.warn({ reopen_at: new Date(reopenAt).toISOString() }, "1C failing: breaker open");
    // The probe goes out when the cooldown ends, not at the next poll.
    clearTimeout(this.#probeTimer);
    this.#probeTimer = setTimeout(() => this.wake(), Math.max(0, reopenAt - this.#deps.now()));
    this.#probeTimer.unref();
  }

  /** 1C answered again after an outage: what waited out the outage goes now, within the concurrency cap. */
  #recovered(): void {
    this.#log.info("1C answering again: breaker closed");
    this.#deps.register
      .bringForwardRetries(this.#deps.now())
      .then((count) => {
        if (count > 0) this.#log.info({ events: count }, "retries held back by the outage are due now");
        this.wake();
      })
      .catch((error: unknown) =>
        this.#log.error({ err: error }, "could not bring retries forward; they keep their backoff"),
      );
  }
}

function keyOf(sender: string, eventId: string): string {
  return `${sender}\u0000${eventId}`;
}

function splitKey(key: string): [string, string] {
  const at = key.indexOf("\u0000");
  return [key.slice(0, at), key.slice(at + 1)];
}
