import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import { EventStatus } from "../domain/event-status.ts";
import { type AttemptKind, type Claim, type EventRecord, StorageUnavailableError } from "../register/port.ts";
import { ATTEMPT_OUTCOMES, type AttemptDeps, type AttemptOutcome, attemptDelivery } from "./attempt-delivery.ts";
import { type BreakerOptions, CircuitBreaker } from "./breaker.ts";
import { DueQueue } from "./due-queue.ts";
import { ReadyClaims } from "./ready-claims.ts";
import { bringsRetriesForward } from "./retry-policy.ts";

/**
 * Claims kept ready per call slot, claimed ahead (port.ts, AttemptKind), so that
 * a slot whose call ends starts the next one at once instead of waiting for a
 * claim's commit; the ready claims are topped up in the commit of the outcomes.
 * One is enough for that (docs/performance.md has the measurements): more only
 * hold leases on events another instance could be calling.
 */
export const AHEAD_PER_SLOT = 1;

export interface DelivererOptions {
  /** Lease owner: unique per process. */
  owner: string;
  /** Calls to 1C in flight at once from this process: each holds a 1C session and licence. */
  concurrency: number;
  /**
   * A claim's lease. It outlives the longest attempt (two calls within the 1C
   * deadline) by at least a fifth of itself (gateway.ts, leaseMsFor): a claim
   * made ahead is called only while at least half of that margin is left
   * (READY_SHARE), or given back unsent.
   */
  leaseMs: number;
  /** Claims kept ready per call slot; 0 claims only for free slots. AHEAD_PER_SLOT when absent. */
  aheadPerSlot?: number;
  /** How often to look for events other processes committed, and for retries that came due. */
  pollMs: number;
  breaker: BreakerOptions;
}

export interface AttemptNotice {
  /** What 1C's answer came to, or lease_lost when a newer claim had taken the event over. */
  outcome: AttemptOutcome | typeof LEASE_LOST;
  durationMs: number;
  record: EventRecord;
}

/** The outcome noticed for an attempt whose lease a newer claim had taken over. */
const LEASE_LOST = "lease_lost";

/** Every outcome an `attempted` notice can carry. */
export const NOTICED_OUTCOMES: readonly AttemptNotice["outcome"][] = [...ATTEMPT_OUTCOMES, LEASE_LOST];

/**
 * The share of its lease a claim made ahead may wait before its call: half the
 * lease's least margin over its longest attempt (gateway.ts, leaseMsFor: two
 * calls within the 1C deadline, then a margin of at least a fifth of the lease).
 */
export const READY_SHARE = 1 / 10;
/** The weight of the latest call in the running mean of call durations. */
const CALL_MS_WEIGHT = 0.2;

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
 *
 * While 1C answers well within the leases, it keeps `aheadPerSlot` claims per
 * slot ready (claimed ahead): a slot whose call ends takes the next at once.
 * A ready claim it will not call (stopping, 1C failing, waited too long) is
 * given back unsent (port.ts, Release).
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
  /** The events of the attempts in flight and of the ready claims: one already claimed here needs no expedited claim. */
  readonly #attempting = new Set<string>();
  readonly #ready: ReadyClaims;
  readonly #aheadPerSlot: number;
  readonly #maxReadyMs: number;
  /** Running mean of 1C calls' durations: claims are made ahead only while a slot's turn is well inside a lease. */
  #callMs = 0;
  readonly #due = new DueQueue();
  readonly #expedite = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  /** When a recovery last brought the waiting retries forward. */
  #broughtForwardAt: number | undefined;
  #unwatch: (() => void) | undefined;
  #pumping: Promise<void> | undefined;
  #again = false;
  #stopped = true;
  /** The register was unavailable at its last use here: its loss and its return are logged once each, not per step. */
  #registerDown = false;

  constructor(deps: AttemptDeps, options: DelivererOptions) {
    super();
    this.setMaxListeners(0);
    this.#deps = deps;
    this.#options = options;
    this.#breaker = new CircuitBreaker(options.breaker, deps.now);
    this.#log = deps.log.child({ component: "deliverer", owner: options.owner });
    this.#aheadPerSlot = Math.max(0, Math.floor(options.aheadPerSlot ?? AHEAD_PER_SLOT));
    this.#maxReadyMs = options.leaseMs * READY_SHARE;
    this.#ready = new ReadyClaims({
      register: deps.register,
      log: this.#log,
      now: deps.now,
      maxWaitMs: this.#maxReadyMs,
      givingBack: (key, done) => {
        const tracked: Promise<void> = done.finally(() => {
          this.#attempting.delete(key);
          this.#inFlight.delete(tracked);
          // Due again, and another slot or instance may take it.
          this.#due.mayBeDue();
        });
        this.#inFlight.add(tracked);
      },
    });
  }

  get breakerState(): CircuitBreaker["state"] {
    return this.#breaker.state;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Claims made ahead, waiting for a slot. */
  get ready(): number {
    return this.#ready.size;
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
      if (change.kind === "rescheduled" || change.remote === true) {
        this.#due.mayBeDue();
        this.wake();
      } else this.expedite(change.sender, change.eventId);
    });
    this.#timer = setInterval(() => {
      this.#due.mayBeDue();
      this.wake();
    }, this.#options.pollMs);
    this.wake();
  }

  /** Stops claiming, gives back the ready claims, and waits for the calls in flight to write their outcome. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unwatch?.();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#probeTimer);
    await this.#pumping;
    this.#ready.giveBackAll("the deliverer is stopping");
    await this.idle();
  }

  /** Someone is waiting for this event: claim it ahead of the queue if there is room. */
  expedite(sender: string, eventId: string): void {
    this.#expedite.add(keyOf(sender, eventId));
    this.wake();
  }

  wake(): void {
    if (this.#stopped) return;
    void this.#pump();
  }

  /** Claims what is due now, whatever earlier claims found, as far as the breaker and the free slots allow. */
  pump(): Promise<void> {
    this.#due.mayBeDue();
    return this.#pump();
  }

  #pump(): Promise<void> {
    if (this.#pumping !== undefined) {
      this.#again = true;
      return this.#pumping;
    }
    this.#pumping = this.#fill()
      .catch((error: unknown) => {
        if (!this.#registerFailed(error))
          this.#log.error({ err: error }, "claiming failed; will retry at the next poll");
      })
      .finally(() => {
        this.#pumping = undefined;
        if (this.#again && !this.#stopped) {
          this.#again = false;
          void this.#pump();
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
    // An event someone waits for that is ready here already goes first.
    for (const key of this.#expedite) this.#ready.hurry(key);
    this.#startReady();
    // All at once, not one after another: on SQLite they share one commit, on PostgreSQL the pool's
    // connections. Those beyond the free slots are claimed with the rest when a slot frees. An event
    // already being attempted here (claimed meanwhile with all that is due) needs no claim of its own.
    const waiting = [...this.#expedite].filter((key) => !this.#attempting.has(key));
    const expedited = waiting.slice(0, this.#room());
    this.#expedite.clear();
    // Those left over are claimed with the rest: due, whatever the last claim found.
    if (expedited.length < waiting.length) this.#due.mayBeDue();
    await Promise.all(
      expedited.map((key) => {
        const [sender, eventId] = splitKey(key);
        return this.#claimAndStart({ sender, eventId }, 1);
      }),
    );
    // Free slots take just-in-time claims, started at once, then the ready claims are topped up: after
    // them, so that the slots get the oldest events. Once all slots are busy, a slot that frees takes a
    // ready claim, and only the claim ahead is left, written with the outcomes of the turn.
    for (;;) {
      this.#startReady();
      const room = this.#room();
      if (room > 0 && this.#due.isDry("just_in_time")) break;
      const started = room > 0 ? await this.#claimAndStart(undefined, room) : 0;
      if (started < room) break; // nothing more is due
      const ahead = this.#aheadWanted();
      if (ahead === 0) {
        if (room === 0) break;
        continue;
      }
      if ((await this.#claimAhead(ahead)) < ahead) break;
    }
    this.#startReady();
  }

  /** How many claims to make ahead now: none while stopping, while 1C fails or is slow, or when nothing more is due. */
  #aheadWanted(): number {
    if (this.#stopped || this.#due.isDry("ahead") || this.#aheadPerSlot === 0 || this.#breaker.state !== "closed")
      return 0;
    // A ready claim waits about aheadPerSlot calls for its slot: that must stay well inside its lease.
    if (this.#callMs * this.#aheadPerSlot > this.#maxReadyMs / 2) return 0;
    return Math.max(0, this.#options.concurrency * this.#aheadPerSlot - this.#ready.size);
  }

  /** Free slots take ready claims, at once. */
  #startReady(): void {
    while (this.#room() > 0) {
      const claim = this.#ready.next();
      if (claim === undefined) return;
      this.#start(claim);
    }
  }

  #room(): number {
    if (this.#stopped) return 0;
    return Math.max(0, Math.min(this.#options.concurrency - this.#calling, this.#breaker.permits()));
  }

  async #claimAndStart(only: { sender: string; eventId: string } | undefined, limit: number): Promise<number> {
    const claims =
      only === undefined
        ? await this.#due.claim("just_in_time", limit, () => this.#claim("just_in_time", limit, undefined))
        : await this.#claim("just_in_time", limit, only);
    for (const claim of claims) this.#start(claim);
    return claims.length;
  }

  async #claimAhead(limit: number): Promise<number> {
    const askedAt = performance.now();
    const claims = await this.#due.claim("ahead", limit, () => this.#claim("ahead", limit, undefined));
    for (const claim of claims) {
      const key = keyOf(claim.record.sender, claim.record.eventId);
      this.#attempting.add(key);
      this.#ready.add(claim, key, askedAt);
    }
    // The breaker opened meanwhile: given back now. Stopped meanwhile: stop() gives them back.
    if (this.#breaker.state === "open") this.#ready.giveBackAll("1C is failing (breaker open)");
    return claims.length;
  }

  async #claim(
    kind: AttemptKind,
    limit: number,
    only: { sender: string; eventId: string } | undefined,
  ): Promise<Claim[]> {
    const claims = await this.#deps.register.claim({
      owner: this.#options.owner,
      now: this.#deps.now(),
      leaseMs: this.#options.leaseMs,
      limit,
      ...(only === undefined ? {} : { only }),
      ...(kind === "ahead" ? { kind } : {}),
    });
    this.#registerAnswered();
    return claims;
  }

  #start(claim: Claim): void {
    const key = keyOf(claim.record.sender, claim.record.eventId);
    this.#attempting.add(key);
    this.#breaker.onStart();
    this.#calling++;
    let calling = true;
    const startedAt = performance.now();
    // 1C is done with this attempt: the breaker learns how it went, and the slot goes to the next
    // claim: a ready one at once, or one written in the same group commit as this attempt's outcome.
    const callsDone = (onecAnswered: boolean | undefined): void => {
      if (!calling) return;
      calling = false;
      this.#calling--;
      const callMs = performance.now() - startedAt;
      this.#callMs += (callMs - this.#callMs) * CALL_MS_WEIGHT;
      if (onecAnswered === false) this.#recordFailure();
      else if (onecAnswered === true && this.#breaker.onSuccess()) this.#recovered();
      else if (onecAnswered === undefined) this.#breaker.onAbandoned();
      this.#startReady();
      this.wake();
    };
    const running: Promise<void> = attemptDelivery(this.#deps, claim, callsDone)
      .then(({ record, outcome, leaseLost, durationMs }) => {
        if (!leaseLost && record.status === EventStatus.FAILED_FINAL) {
          this.#log.error(
            {
              correlation_id: record.correlationId,
              event_id: record.eventId,
              sender: record.sender,
              error_class: record.lastErrorClass,
            },
            `event stopped: ${record.lastError}`,
          );
        }
        this.emit("attempted", { outcome: leaseLost ? LEASE_LOST : outcome, durationMs, record });
        this.emit("settled", record);
      })
      .catch((error: unknown) => {
        // Storage lost while writing the outcome: the lease expires and a later claim retries.
        if (!this.#registerFailed(error)) {
          const { correlationId, eventId } = claim.record;
          this.#log.error(
            { err: error, correlation_id: correlationId, event_id: eventId },
            "attempt outcome not written",
          );
        }
      })
      .finally(() => {
        callsDone(undefined);
        this.#attempting.delete(key);
        this.#inFlight.delete(running);
        this.wake();
      });
    this.#inFlight.add(running);
  }

  /**
   * The register cannot record now (its database lost, its disk full): said
   * once, when it starts; the claims and outcomes that fail meanwhile are
   * its consequences, retried at each poll. False for any other error.
   */
  #registerFailed(error: unknown): boolean {
    if (!(error instanceof StorageUnavailableError)) return false;
    if (!this.#registerDown) {
      this.#registerDown = true;
      this.#log.warn(
        { err: error },
        "register unavailable: claiming again at each poll; outcomes not written are retried when leases expire",
      );
    }
    return true;
  }

  #registerAnswered(): void {
    if (!this.#registerDown) return;
    this.#registerDown = false;
    this.#log.info("register available again: claiming resumed");
  }

  #recordFailure(): void {
    const before = this.#breaker.state;
    this.#breaker.onFailure();
    const reopenAt = this.#breaker.openUntil;
    if (reopenAt === undefined) return;
    // No call goes out before the cooldown ends: the ready claims would only age.
    this.#ready.giveBackAll("1C is failing (breaker open)");
    if (before !== "open") this.#log.warn({ reopen_at: new Date(reopenAt).toISOString() }, "1C failing: breaker open");
    // The probe goes out when the cooldown ends, not at the next poll.
    clearTimeout(this.#probeTimer);
    this.#probeTimer = setTimeout(
      () => {
        this.#due.mayBeDue();
        this.wake();
      },
      Math.max(0, reopenAt - this.#deps.now()),
    );
    this.#probeTimer.unref();
  }

  /**
   * 1C answered again after an outage: what waited out the outage goes now, within the concurrency cap,
   * unless a recovery a short while ago did that already (retry-policy.ts, bringsRetriesForward).
   */
  #recovered(): void {
    const now = this.#deps.now();
    if (!bringsRetriesForward(this.#deps.policy, this.#broughtForwardAt, now)) {
      this.#log.info(
        { retries_brought_forward_at: new Date(this.#broughtForwardAt ?? now).toISOString() },
        "1C answering again: breaker closed; retries keep their backoff, 1C having failed again since they were last brought forward",
      );
      return;
    }
    this.#broughtForwardAt = now;
    this.#log.info("1C answering again: breaker closed");
    this.#deps.register
      .bringForwardRetries(now)
      .then((count) => {
        if (count > 0) this.#log.info({ events: count }, "retries held back by the outage are due now");
        this.#due.mayBeDue();
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
