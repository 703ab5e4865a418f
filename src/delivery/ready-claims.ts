import type { Logger } from "pino";
import { EventStatus } from "../domain/event-status.ts";
import type { Claim, EventRegister } from "../register/port.ts";

export interface ReadyClaimsDeps {
  register: Pick<EventRegister, "settle">;
  log: Logger;
  now: () => number;
  /** How long a claim may wait for a slot: past it, it is given back instead of called. */
  maxWaitMs: number;
  /** A give-back has started: `done` settles once it is written, or failed and left to the lease. */
  givingBack: (key: string, done: Promise<void>) => void;
}

/** A claim made ahead, waiting for a slot. */
interface ReadyClaim {
  claim: Claim;
  key: string;
  /** performance.now() when the claim was asked for: its lease started no earlier. */
  askedAt: number;
}

/**
 * The deliverer's claims made ahead (port.ts, AttemptKind "ahead"), in the
 * order they are to be called. A claim that will not be called (stopping, 1C
 * failing, waited too long for its lease) is given back unsent (port.ts,
 * Release): the claim is undone, the event due as before.
 */
export class ReadyClaims {
  readonly #deps: ReadyClaimsDeps;
  readonly #queue: ReadyClaim[] = [];

  constructor(deps: ReadyClaimsDeps) {
    this.#deps = deps;
  }

  get size(): number {
    return this.#queue.length;
  }

  add(claim: Claim, key: string, askedAt: number): void {
    this.#queue.push({ claim, key, askedAt });
  }

  /** Someone waits for this event: if it is ready here, it is called next. */
  hurry(key: string): void {
    const at = this.#queue.findIndex((ready) => ready.key === key);
    if (at <= 0) return;
    const [ready] = this.#queue.splice(at, 1);
    if (ready !== undefined) this.#queue.unshift(ready);
  }

  /** The next claim to call; those that waited too long for a slot are given back on the way. */
  next(): Claim | undefined {
    for (let ready = this.#queue.shift(); ready !== undefined; ready = this.#queue.shift()) {
      if (performance.now() - ready.askedAt <= this.#deps.maxWaitMs) return ready.claim;
      this.#giveBack(ready, "it waited too long for a slot");
    }
    return undefined;
  }

  giveBackAll(why: string): void {
    for (const ready of this.#queue.splice(0)) this.#giveBack(ready, why);
  }

  #giveBack(ready: ReadyClaim, why: string): void {
    const { register, log, now } = this.#deps;
    const at = now();
    const { eventId, correlationId } = ready.claim.record;
    const done = register
      .settle(
        ready.claim.lease,
        { status: EventStatus.PROCESSING },
        { startedAt: at, durationMs: 0, outcome: "released", detail: why },
        at,
      )
      .then(
        (released) => {
          if (released !== undefined)
            log.debug({ correlation_id: correlationId, event_id: eventId, why }, "ready claim given back");
        },
        (error: unknown) =>
          log.error(
            { err: error, correlation_id: correlationId, event_id: eventId },
            "ready claim not given back; its lease will expire",
          ),
      );
    this.#deps.givingBack(ready.key, done);
  }
}
