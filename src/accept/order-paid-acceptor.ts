import type { Deliverer } from "../delivery/deliverer.ts";
import type { Canonical } from "../domain/fingerprint.ts";
import { fingerprintOf } from "../domain/fingerprint.ts";
import { EventStatus } from "../register/event-status.ts";
import type { EventRecord, EventRegister } from "../register/port.ts";
import type { AcceptResult } from "./accept-result.ts";

export interface AcceptorOptions {
  /** How long a request waits for 1C's outcome before answering 202. */
  syncWaitMs: number;
  /** How often to look at the register while another process delivers the event. */
  pollMs?: number;
  now: () => number;
}

export interface AcceptRequest {
  sender: string;
  eventId: string;
  canonical: Canonical;
  correlationId: string;
}

/**
 * Turns at-least-once requests into one recorded event: reserve it, ask the
 * deliverer to take it at once, and answer within the sync wait either way.
 * The request never calls 1C itself: every call goes through the deliverer's
 * concurrency cap, breaker and leases.
 */
export class OrderPaidAcceptor {
  readonly #register: EventRegister;
  /** Absent in a process that only serves HTTP while separate workers deliver. */
  readonly #deliverer: Deliverer | undefined;
  readonly #options: Required<AcceptorOptions>;
  /** Aborted when the server stops: waiting requests answer 202 at once, their events already durable. */
  readonly #stopping = new AbortController();

  constructor(register: EventRegister, deliverer: Deliverer | undefined, options: AcceptorOptions) {
    this.#register = register;
    this.#deliverer = deliverer;
    this.#options = { pollMs: 20, ...options };
  }

  async accept(request: AcceptRequest): Promise<AcceptResult> {
    const reserved = await this.#register.reserve({
      sender: request.sender,
      eventId: request.eventId,
      fingerprint: request.canonical.fingerprint,
      policyVersion: request.canonical.policy,
      body: request.canonical.text,
      correlationId: request.correlationId,
      now: this.#options.now(),
    });
    const { record } = reserved;
    // 409 comes before any "still processing" answer: a different body is never a repeat.
    if (reserved.outcome === "existing" && !sameEvent(record, request.canonical)) return { kind: "conflict", record };
    // Only the request that recorded the event gets 201; every other one is a repeat of it.
    const firstAnswer = reserved.outcome === "created";
    if (record.status !== EventStatus.PROCESSING) return { kind: "event", record, firstAnswer };
    this.#deliverer?.expedite(record.sender, record.eventId);
    return { kind: "event", record: await this.#waitForOutcome(record), firstAnswer };
  }

  /**
   * Waits while an attempt is due or running, up to the sync wait: woken by
   * this process's deliverer, polling for attempts in other processes.
   */
  async #waitForOutcome(record: EventRecord): Promise<EventRecord> {
    const deadline = this.#options.now() + this.#options.syncWaitMs;
    let latest = record;
    while (latest.status === EventStatus.PROCESSING && this.#worthWaiting()) {
      const left = deadline - this.#options.now();
      if (left <= 0) break;
      await this.#settledOrTimeout(latest, Math.min(left, this.#options.pollMs));
      latest = (await this.#register.find(record.sender, record.eventId)) ?? latest;
    }
    return latest;
  }

  /** Ends every wait now; later requests do not wait either. */
  stopWaiting(): void {
    this.#stopping.abort();
  }

  /** While the breaker is open, or the server stops, nothing will be attempted soon: answer 202 at once. */
  #worthWaiting(): boolean {
    if (this.#stopping.signal.aborted) return false;
    return this.#deliverer === undefined || this.#deliverer.delivering;
  }

  /**
   * Resolves on this event's settle in this process, on stop, or after `ms`.
   * The timer is our own (never AbortSignal.timeout): a request waiting for
   * another process's delivery has nothing else to wake it.
   */
  #settledOrTimeout(record: EventRecord, ms: number): Promise<void> {
    const stopping = this.#stopping.signal;
    if (stopping.aborted) return Promise.resolve();
    const deliverer = this.#deliverer;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopping.removeEventListener("abort", done);
        deliverer?.off("settled", onSettled);
        resolve();
      };
      const onSettled = (settled: EventRecord) => {
        if (settled.sender === record.sender && settled.eventId === record.eventId) done();
      };
      const timer = setTimeout(done, ms);
      stopping.addEventListener("abort", done, { once: true });
      deliverer?.on("settled", onSettled);
    });
  }
}

/** Compared under the policy the row was recorded with, so a policy change never turns a repeat into a 409. */
function sameEvent(record: EventRecord, canonical: Canonical): boolean {
  if (record.policyVersion === canonical.policy) return record.fingerprint === canonical.fingerprint;
  return record.fingerprint === fingerprintOf(canonical.text, record.policyVersion);
}
