import { EventStatus } from "../domain/event-status.ts";
import type { Canonical } from "../domain/fingerprint.ts";
import { fingerprintOf } from "../domain/fingerprint.ts";
import type { SiteOrderKeys } from "../domain/order-paid.ts";
import type { TraceContext } from "../observability/trace-context.ts";
import { reserveTraced } from "../observability/trace-spans.ts";
import type { EventRecord, EventRegister, ReserveResult } from "../register/port.ts";
import type { SourceDeliveryInput } from "../register/source-port.ts";
import { withinDeadline } from "../util/deadline.ts";
import type { AcceptResult } from "./accept-result.ts";

export interface AcceptorOptions {
  /** How long a request waits for 1C's outcome before answering 202. */
  syncWaitMs: number;
  /**
   * How often a waiting request looks at the register itself: the fallback
   * for an event another process delivers, whose settle this process's
   * register does not see (SQLite). In-process settles wake it at once.
   */
  pollMs?: number;
  /**
   * The same while the register hears other instances' settles itself
   * (PostgreSQL's LISTEN): a read then only finds a notice that was lost (a
   * crash between commit and publish, a reconnect), and 600 waiters reading
   * every 50 ms would be 12 000 reads a second on the database they share.
   */
  notifiedPollMs?: number;
  now: () => number;
  /**
   * Whether an attempt may come soon: false while this process's breaker is
   * open, so requests answer 202 at once instead of waiting in vain.
   */
  deliveryActive?: () => boolean;
  /**
   * Asks this process's deliverer to claim the event now. Called just after
   * the reservation is submitted, for a request that will wait: on SQLite the
   * claim then joins the reservation's group commit (it runs after it, in
   * the same transaction), one commit less before 1C is called.
   */
  expedite?: (sender: string, eventId: string) => void;
  /** How long a reservation made without a read first may take before a read backs it (see #reservedOrRead). */
  readAfterMs?: number;
  /** How long such a request waits for its reservation once the read found a row that may be its own (see #reservedOrRead). */
  ownRowWaitMs?: number;
}

export interface AcceptRequest {
  sender: string;
  eventId: string;
  canonical: Canonical;
  /** The event's order id and number, stored beside its body for support's search. */
  siteOrder: SiteOrderKeys;
  correlationId: string;
  /** How long this request waits for 1C at most; the acceptor's syncWaitMs when absent (a platform's answer deadline is shorter). */
  waitMs?: number;
  /** The platform delivery it came from: made and recorded with the event, in its transaction, only when the event is new. */
  source?: () => SourceDeliveryInput;
  /** The W3C trace context it came under: stored with the event, for its delivery attempts to continue. */
  traceContext?: TraceContext | undefined;
  /**
   * Whether this process admitted these very bytes before (Intake's
   * `recognised`). False: the event is most likely new, so the reserving
   * write goes first instead of a read that would only miss. Absent or true:
   * read first (a repeat, most likely).
   */
  recognised?: boolean;
}

/**
 * Turns at-least-once requests into one recorded event: look it up, reserve
 * it if it is new, and answer within the sync wait either way. The request
 * never calls 1C itself: the register tells the deliverer of the new event,
 * and every call goes through the deliverer's concurrency cap, breaker and
 * leases.
 */
export class OrderPaidAcceptor {
  readonly #register: EventRegister;
  readonly #options: Required<AcceptorOptions>;
  /** Aborted when the server stops: waiting requests answer 202 at once, their events already durable. */
  readonly #stopping = new AbortController();

  constructor(register: EventRegister, options: AcceptorOptions) {
    this.#register = register;
    this.#options = {
      pollMs: DEFAULT_POLL_MS,
      notifiedPollMs: DEFAULT_NOTIFIED_POLL_MS,
      deliveryActive: () => true,
      expedite: () => {},
      readAfterMs: DEFAULT_READ_AFTER_MS,
      ownRowWaitMs: DEFAULT_OWN_ROW_WAIT_MS,
      ...options,
    };
  }

  async accept(request: AcceptRequest): Promise<AcceptResult> {
    // The wait counts from here, not from the reservation's commit: a slow write must not push the
    // answer past the sync wait (or past a platform's own deadline).
    const deadline =
      this.#options.now() + Math.min(request.waitMs ?? this.#options.syncWaitMs, this.#options.syncWaitMs);
    // A repeat changes nothing: answered from a read, without taking the write lock.
    // Only a miss goes on to the reserving write, which still settles the race of
    // two first requests (one of them then gets "existing", answered the same way).
    // Bytes never seen here skip the read: it would only miss (#reservedOrRead).
    if (request.recognised !== false) {
      const found = await this.#register.find(request.sender, request.eventId);
      if (found !== undefined) return this.#answer({ outcome: "existing", record: found }, request.canonical, deadline);
    }
    const reserving = reserveTraced(
      this.#register,
      {
        sender: request.sender,
        eventId: request.eventId,
        fingerprint: request.canonical.fingerprint,
        policyVersion: request.canonical.policy,
        body: request.canonical.text,
        ...request.siteOrder,
        correlationId: request.correlationId,
        now: this.#options.now(),
        ...(request.source === undefined ? {} : { source: request.source() }),
      },
      request.traceContext,
    );
    if (deadline > this.#options.now() && this.#worthWaiting()) this.#options.expedite(request.sender, request.eventId);
    const reserved = request.recognised === false ? await this.#reservedOrRead(reserving, request) : await reserving;
    return this.#answer(reserved, request.canonical, deadline);
  }

  /**
   * A reservation made without reading first, for bytes this process never
   * saw. It answers a repeat too ("existing"), unless the write lock is held
   * elsewhere (another process's transaction, a CLI): a repeat must not wait
   * for that, so a reservation still out after `readAfterMs`, or failed, is
   * backed by a read, and a recorded event is answered from it. A read that
   * fails or misses leaves the answer to the reservation.
   *
   * Only the request that recorded the event gets 201, so a row this very
   * reservation may have written (committed, its answer not yet back) is
   * waited for: one under the request's correlation id and with its body.
   * Its answer follows its commit within milliseconds; a sender reusing its
   * correlation id for a retry meets the same row while the lock is held
   * elsewhere, so that wait ends after `ownRowWaitMs` with the row's answer.
   * The receipt time cannot tell the two apart: PostgreSQL may stamp it with
   * the database's clock.
   */
  async #reservedOrRead(reserving: Promise<ReserveResult>, request: AcceptRequest): Promise<ReserveResult> {
    let failure: { error: unknown } | undefined;
    try {
      const reserved = await within(reserving, this.#options.readAfterMs);
      if (reserved !== undefined) return reserved;
    } catch (error) {
      failure = { error };
    }
    const found = await this.#register.find(request.sender, request.eventId).catch(() => undefined);
    if (found === undefined) {
      if (failure !== undefined) throw failure.error;
      return reserving;
    }
    // The reservation, if it still runs, finds this row: its own answer is not needed.
    reserving.catch(() => {});
    const existing: ReserveResult = { outcome: "existing", record: found };
    // A failed reservation wrote nothing it can answer for; another request's row (or body) is not this one's.
    if (failure !== undefined || found.correlationId !== request.correlationId || !sameEvent(found, request.canonical))
      return existing;
    const reserved = await within(reserving, this.#options.ownRowWaitMs).catch(() => undefined);
    return reserved ?? existing;
  }

  /** The one answer code for a row, however it was found: by the read or by the reserving write. */
  async #answer({ outcome, record }: ReserveResult, canonical: Canonical, deadline: number): Promise<AcceptResult> {
    // 409 comes before any "still processing" answer: a different body is never a repeat.
    if (outcome === "existing" && !sameEvent(record, canonical)) return { kind: "conflict", record };
    // Only the request that recorded the event gets 201; every other one is a repeat of it.
    const firstAnswer = outcome === "created";
    if (record.status !== EventStatus.PROCESSING) return { kind: "event", record, firstAnswer };
    return { kind: "event", record: await this.#waitForOutcome(record, deadline), firstAnswer };
  }

  /**
   * Waits while an attempt is due or running, up to the deadline: woken by
   * the register's change notice, polling for attempts in other processes.
   * A read that fails keeps the row already known: the event is recorded,
   * and its answer says so (202) rather than "cannot accept now".
   */
  async #waitForOutcome(record: EventRecord, deadline: number): Promise<EventRecord> {
    let latest = record;
    while (latest.status === EventStatus.PROCESSING && this.#worthWaiting()) {
      const left = deadline - this.#options.now();
      if (left <= 0) break;
      const pollMs =
        this.#register.hearsOtherInstances?.() === true ? this.#options.notifiedPollMs : this.#options.pollMs;
      // A settle made here comes with its committed row; only a timeout or another process's settle reads again.
      const settled = await this.#settledOrTimeout(latest, Math.min(left, pollMs));
      latest = settled ?? (await this.#register.find(record.sender, record.eventId).catch(() => undefined)) ?? latest;
    }
    return latest;
  }

  /** Ends every wait now; later requests do not wait either. */
  stopWaiting(): void {
    this.#stopping.abort();
  }

  /** While the breaker is open, or the server stops, nothing will be attempted soon: answer 202 at once. */
  #worthWaiting(): boolean {
    return !this.#stopping.signal.aborted && this.#options.deliveryActive();
  }

  /**
   * Resolves when the register reports this event settled (with its row, when
   * the settle was made here), on stop, or after `ms`. The timer is our own
   * (never AbortSignal.timeout): a request waiting for another process's
   * delivery has nothing else to wake it.
   */
  #settledOrTimeout(record: EventRecord, ms: number): Promise<EventRecord | undefined> {
    const stopping = this.#stopping.signal;
    if (stopping.aborted) return Promise.resolve(undefined);
    return new Promise<EventRecord | undefined>((resolve) => {
      const done = (settled?: EventRecord) => {
        clearTimeout(timer);
        stopping.removeEventListener("abort", stopped);
        unwatch();
        resolve(settled);
      };
      const stopped = () => done();
      const unwatch = this.#register.watch((change) => {
        if (change.kind === "settled" && change.sender === record.sender && change.eventId === record.eventId) {
          done(change.record);
        }
      });
      const timer = setTimeout(stopped, ms);
      stopping.addEventListener("abort", stopped, { once: true });
    });
  }
}

/**
 * Above a reservation's p99 under a full load here (37–56 ms at 50 connections), so a read backs one only
 * when something holds it up; well under a client's timeout when the write lock is held elsewhere.
 */
const DEFAULT_READ_AFTER_MS = 100;

/**
 * Far above the time between a reservation's commit and its answer (a reservation's p99 under a full
 * load is 37–56 ms); far below the register's busy timeout (5 s), which a held write lock would cost.
 */
const DEFAULT_OWN_ROW_WAIT_MS = 1000;

/** 20 looks a second per waiting request: cheap reads (WAL), and at most 50 ms late for another process's settle. */
const DEFAULT_POLL_MS = 50;

/** Two looks a second: at most half a second late for a settle whose notice was lost. */
const DEFAULT_NOTIFIED_POLL_MS = 500;

/** The reservation's result if it comes within `ms`, undefined after; a rejection passes on. */
function within(reserving: Promise<ReserveResult>, ms: number): Promise<ReserveResult | undefined> {
  return withinDeadline<ReserveResult | undefined>(reserving, ms, undefined);
}

/** Compared under the policy the row was recorded with, so a policy change never turns a repeat into a 409. */
function sameEvent(record: EventRecord, canonical: Canonical): boolean {
  if (record.policyVersion === canonical.policy) return record.fingerprint === canonical.fingerprint;
  return record.fingerprint === fingerprintOf(canonical.text, record.policyVersion);
}
