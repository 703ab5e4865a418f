import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import { type AttemptDeps, attemptDelivery } from "../delivery/attempt-delivery.ts";
import type { Canonical } from "../domain/fingerprint.ts";
import { fingerprintOf } from "../domain/fingerprint.ts";
import type { AcceptResult } from "../http/answers.ts";
import { isFinished } from "../register/event-status.ts";
import type { EventRecord, EventRegister, Lease } from "../register/port.ts";

export interface AcceptorOptions {
  /** How long a request waits for 1C's outcome before answering 202. */
  syncWaitMs: number;
  /** Lease on a delivery attempt: longer than the 1C timeout, so a live attempt is never taken over. */
  leaseMs: number;
  /** How often to look at the register for an attempt another process runs. */
  pollMs?: number;
}

export interface AcceptRequest {
  sender: string;
  eventId: string;
  canonical: Canonical;
  correlationId: string;
}

/**
 * Turns at-least-once requests into one delivery: reserve under a lease, call
 * 1C outside any transaction, and answer within the sync wait either way.
 */
export class OrderPaidAcceptor {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #register: EventRegister;
  readonly #attempt: AttemptDeps;
  readonly #options: Required<AcceptorOptions>;
  /** Attempts running in this process, so that duplicates here await them instead of polling. */
  readonly #inFlight = new Map<string, Promise<EventRecord>>();

  constructor(register: EventRegister, attempt: AttemptDeps, options: AcceptorOptions) {
    this.#register = register;
    this.#attempt = attempt;
    this.#options = { pollMs: 20, ...options };
  }

  get log(): Logger {
    return this.#attempt.log;
  }

  async accept(request: AcceptRequest): Promise<AcceptResult> {
    const now = this.#attempt.now();
    const reserved = await this.#register.reserve({
      sender: request.sender,
      eventId: request.eventId,
      fingerprint: request.canonical.fingerprint,
      policyVersion: request.canonical.policy,
      body: request.canonical.text,
      correlationId: request.correlationId,
      now,
      leaseOwner: this.owner,
      leaseMs: this.#options.leaseMs,
    });
    if (reserved.outcome !== "existing") {
      const settled = await this.#waitAtMost(this.#startAttempt(reserved.record, reserved.lease));
      return { kind: "event", record: settled ?? reserved.record, firstAnswer: true };
    }
    const { record } = reserved;
    // 409 comes before any "still processing" answer: a different body is never a repeat.
    if (!sameEvent(record, request.canonical)) return { kind: "conflict", record };
    if (isFinished(record.status)) return { kind: "event", record, firstAnswer: false };
    const settled = await this.#waitForOther(record);
    return { kind: "event", record: settled, firstAnswer: false };
  }

  /** Resolves when every attempt started here has written its outcome. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()]);
  }

  #startAttempt(record: EventRecord, lease: Lease): Promise<EventRecord> {
    const key = keyOf(record);
    const attempt = attemptDelivery(this.#attempt, record, lease)
      .catch((error: unknown) => {
        // Storage lost mid-attempt: the lease expires and a later claim retries.
        this.#attempt.log.error({ err: error, event_id: record.eventId }, "delivery attempt failed to settle");
        return record;
      })
      .finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, attempt);
    return attempt;
  }

  async #waitAtMost(attempt: Promise<EventRecord>): Promise<EventRecord | undefined> {
    if (this.#options.syncWaitMs === 0) return undefined;
    const timeout = new AbortController();
    try {
      return await Promise.race([
        attempt,
        delay(this.#options.syncWaitMs, undefined, { signal: timeout.signal }).catch(() => undefined),
      ]);
    } finally {
      timeout.abort();
    }
  }

  /** Another request holds the event: wait for its outcome, here or in another process. */
  async #waitForOther(record: EventRecord): Promise<EventRecord> {
    const local = this.#inFlight.get(keyOf(record));
    if (local !== undefined) return (await this.#waitAtMost(local)) ?? record;
    const now = this.#attempt.now();
    if (record.leaseUntil === null || record.leaseUntil <= now || this.#options.syncWaitMs === 0) return record;
    const deadline = now + this.#options.syncWaitMs;
    let latest = record;
    while (this.#attempt.now() < deadline) {
      await delay(this.#options.pollMs);
      latest = (await this.#register.find(record.sender, record.eventId)) ?? latest;
      if (isFinished(latest.status) || latest.leaseUntil === null) break;
    }
    return latest;
  }
}

function keyOf(record: EventRecord): string {
  return `${record.sender}\u0000${record.eventId}`;
}

/** Compared under the policy the row was recorded with, so a policy change never turns a repeat into a 409. */
function sameEvent(record: EventRecord, canonical: Canonical): boolean {
  if (record.policyVersion === canonical.policy) return record.fingerprint === canonical.fingerprint;
  return record.fingerprint === fingerprintOf(canonical.text, record.policyVersion);
}
