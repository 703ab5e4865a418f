import type { EventStatus } from "../domain/event-status.ts";
import type { OnecOrder, ResponseSnapshot } from "../domain/first-answer.ts";
import type { SiteOrderKeys } from "../domain/order-paid.ts";
import type { SessionStore } from "./session-port.ts";
import type { SourceDeliveryInput, SourceDeliveryLog } from "./source-port.ts";

/**
 * The inbound event register, as the rest of the gateway sees it: the
 * composition of the narrow ports below, each with its own conformance suite
 * (test/register/conformance/). Every backend (SQLite, PostgreSQL) provides
 * them all through RegisterCore (register-core.ts) and its own statements
 * (backend.ts). Times are epoch milliseconds.
 */
export interface EventRegister extends EventQueue, EventStore, AuditTrail, RegisterMaintenance {
  /**
   * Proves the register can durably write now: writes a probe row of a large
   * order's size and deletes it in one committed transaction (register_probe,
   * migration 0007), so it fails where a reservation would (lock held, disk
   * full, file or server read-only). Throws StorageUnavailableError if not.
   */
  ping(): Promise<void>;

  /**
   * Whether the register could write just now, kept up to date in the
   * background (writability.ts) so that /readyz answers from it without
   * waiting on a broken database. Absent on a bare register.
   */
  readonly writability?: RegisterWritability;

  /** The rate limit's counter shared by every instance, where the backend has one (PostgreSQL). */
  readonly hitCounter?: HitCounter;

  /**
   * Now on the clock the records' times (receivedAt, nextAttemptAt,
   * leaseUntil) are stamped with, where that is not this process's own
   * (PostgreSQL stamps with the database's now()): a difference between one
   * of them and now, as a Retry-After, is taken against this, not Date.now().
   * Absent, or undefined, where the caller's clock stamps them (SQLite;
   * PostgreSQL on clock "node").
   */
  clockNow?(): number | undefined;

  /**
   * Whether `watch` hears the other instances' commits now (PostgreSQL, while
   * its LISTEN connection is up). Absent or false: a request waiting for an
   * event another process settles learns of it only by reading again (SQLite).
   */
  hearsOtherInstances?(): boolean;

  /** The console's sign-ins, kept where every instance sees them. */
  readonly sessions: SessionStore;

  /** The platforms' webhook deliveries, kept for support (source-port.ts). */
  readonly sources: SourceDeliveryLog;

  close(): Promise<void>;
}

/**
 * The delivery queue: an event is pending until 1C has it or it ends
 * FAILED_FINAL. Reserve records, claim leases, settle writes an outcome under
 * its lease (fencing), replay puts an event back.
 */
export interface EventQueue {
  /**
   * Records a new event (PROCESSING, due now), or finds the one already
   * recorded under (sender, eventId), atomically. Throws
   * StorageUnavailableError when nothing could be durably recorded.
   */
  reserve(request: ReserveRequest): Promise<ReserveResult>;

  /**
   * Takes leases on due events (pending, no live lease, next_attempt_at passed),
   * in one short write transaction, and opens an attempt row for each. Every
   * claimed event gets an attempt: what it does (send, or ask 1C before
   * stopping) is the delivery policy's call, made on the claimed record.
   * A claim of kind "ahead" takes only events none of whose attempts was
   * lost (every attempt since the last replay finished, and no attempt
   * claimed ahead ever left unfinished): see AttemptKind.
   */
  claim(request: ClaimRequest): Promise<Claim[]>;

  /**
   * Writes the outcome of one attempt, only if `lease` is still the newest
   * claim (fencing token). The attempt's own history row is written either way.
   * Returns the updated record, or undefined when the lease was lost. A
   * Release gives an unsent claim back the same way.
   */
  settle(lease: Lease, settlement: Settlement, report: AttemptReport, now: number): Promise<EventRecord | undefined>;

  /**
   * Makes every waiting retry due now; returns how many. Called when 1C is
   * back after an outage: the backoff events earned while it was down no
   * longer says anything about when 1C can take them.
   */
  bringForwardRetries(now: number): Promise<number>;

  /** Puts an event back to pending with a fresh attempt budget, and records who asked and why. */
  replay(request: ReplayRequest): Promise<ReplayResult>;

  /**
   * Calls `listener` after each committed change that someone may be waiting
   * for: an event recorded, replayed or settled. Returns the unsubscribe.
   * The SQLite register sees only its own process's changes: waiters poll
   * for the rest. A backend with server-side notification sees them all.
   */
  watch(listener: (change: RegisterChange) => void): () => void;
}

/** The events as support and monitoring read them. */
export interface EventStore {
  find(sender: string, eventId: string): Promise<EventRecord | undefined>;
  /** Every sender's event under this id: support staff know an event by its id alone. */
  findByEventId(eventId: string): Promise<EventRecord[]>;
  /** Oldest first: for bulk work (replay by status and window). */
  list(filter: ListFilter): Promise<EventRecord[]>;
  /** Newest first, keyset-paginated: for people browsing. */
  page(filter: ListFilter & { before?: PageCursor }): Promise<EventRecord[]>;
  /**
   * Support's search (the console): events whose event_id, correlation id,
   * 1C order id or number, or the site's own order id or number (the body's
   * order.id, order.number) equals `term` exactly; newest first, at most `limit`.
   */
  search(term: string, limit: number): Promise<EventRecord[]>;
  /** Events per status within the list's bounds (sender, since, until): the console's tabs. */
  countByStatus(filter: StatusCountFilter): Promise<Record<EventStatus, number>>;
  /** What monitoring needs, in one read: the pending backlog, its oldest event, and the dead letters. */
  backlog(): Promise<Backlog>;
}

/** What happened to an event: every delivery attempt, every replay and who asked for it. */
export interface AuditTrail {
  listAttempts(sender: string, eventId: string): Promise<AttemptRecord[]>;
  listReplays(sender: string, eventId: string): Promise<ReplayRecord[]>;
}

/** Retention and moving registers (`gateway purge`, `gateway import`). */
export interface RegisterMaintenance {
  /**
   * Deletes at most `batchSize` SUCCEEDED events (and FAILED_FINAL ones, when
   * `includeFailed`) last updated before `olderThan`, with their attempts and
   * replays, in one short write transaction; returns how many events went.
   * Pending events are never touched. A purged event is forgotten: a resend
   * of its event_id is new.
   */
  purgeFinished(request: PurgeRequest): Promise<number>;
  /** How many events purgeFinished would take, all batches together: for a dry run. */
  countFinished(bound: PurgeBound): Promise<number>;
  /**
   * Writes one event as another register held it (`gateway import`): its row,
   * attempts, replays and accepted platform delivery, in one transaction, so
   * a failure leaves nothing of it. An event already recorded under (sender,
   * eventId) is left as it is, its delivery unwritten: "present". The lease
   * is not carried over (rules.ts, importRows).
   */
  importEvent(snapshot: EventSnapshot): Promise<"imported" | "present">;
}

/**
 * Hits per key in fixed windows, counted where every instance sees them: the
 * senders' rate limit across instances. Only a register on a shared server
 * offers one; without it each process counts alone.
 */
export interface HitCounter {
  hit(key: string, windowMs: number): Promise<{ hits: number; resetInMs: number }>;
}

/** A committed change, as `watch` reports it. */
export type RegisterChange = EventChange | RetriesRescheduled;

/** One event changed. */
export interface EventChange {
  /** recorded: a new event is due; replayed: an old one is due again; settled: an attempt wrote its outcome. */
  kind: "recorded" | "replayed" | "settled";
  sender: string;
  eventId: string;
  status: EventStatus;
  /**
   * Made by another instance (PostgreSQL's LISTEN), not this one: nobody here
   * waits for it, so a deliverer claims it with the rest rather than ahead of them.
   */
  remote?: true;
  /**
   * The row as this commit left it, for a change made in this process: a
   * request waiting for the outcome answers from it without reading again.
   * Never sent to other instances.
   */
  record?: EventRecord;
}

/** Retries held back by an outage were made due at once (bringForwardRetries): workers have work. */
export interface RetriesRescheduled {
  kind: "rescheduled";
  count: number;
}

/**
 * With the body's order.id and order.number (SiteOrderKeys): a backend that
 * keeps them as columns for the console's search (SQLite) takes them from
 * here instead of parsing the body.
 */
export interface ReserveRequest extends SiteOrderKeys {
  sender: string;
  eventId: string;
  fingerprint: string;
  policyVersion: string;
  /** Canonical JSON: the very bytes every delivery attempt sends. */
  body: string;
  correlationId: string;
  now: number;
  /**
   * The W3C trace context the event was accepted under, as stored
   * (observability/trace-context.ts): its delivery attempts continue that
   * trace, in whatever process and however much later they run.
   */
  traceContext?: string | null | undefined;
  /**
   * The platform delivery this event comes from (source-port.ts). Written
   * only when this reserve creates the event, in the same transaction, as
   * "accepted" under the event's own sender and event_id (whatever its
   * outcome and sender say); a reserve that finds the event writes nothing.
   */
  source?: SourceDeliveryInput;
}

export type ReserveResult = { outcome: "created" | "existing"; record: EventRecord };

export interface ClaimRequest {
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Claim this one event only (a request is waiting for it), if it is due. */
  only?: { sender: string; eventId: string };
  /** The attempts' kind; "just_in_time" when absent, and always with `only`. */
  kind?: AttemptKind;
}

/**
 * How an attempt was claimed. "just_in_time": for a free call slot, called at
 * once. "ahead": to wait, claimed, for a slot to free (the deliverer's ready
 * claims), so that a slot's next call need not wait for a claim's commit.
 * An ahead attempt left unfinished by a process that died may never have
 * reached 1C: the poison rule does not count it (at most one per event,
 * planAttempt), and the event is never claimed ahead again.
 */
export type AttemptKind = "just_in_time" | "ahead";

export interface Claim {
  record: EventRecord;
  lease: Lease;
}

export interface Lease {
  sender: string;
  eventId: string;
  owner: string;
  /** Grows on every claim; a settle with an older token writes nothing. */
  token: number;
}

export type FinalSettlement = {
  status: typeof EventStatus.FAILED_FINAL;
  error: string;
  errorClass: string;
  response: ResponseSnapshot;
};

/**
 * A claim given back unsent (an ahead claim the deliverer will not call: it is
 * stopping, 1C is failing, or the claim waited too long): the claim is undone
 * under its fence. The event is pending and due as it was before (its status
 * too), its counters are back where they were, and its attempt row is gone:
 * nothing was sent. Only the lease token stays advanced, as fencing needs.
 */
export type Release = { status: typeof EventStatus.PROCESSING };

export type Settlement =
  | { status: typeof EventStatus.SUCCEEDED; order: OnecOrder; response: ResponseSnapshot }
  | FinalSettlement
  | Release
  | {
      status: typeof EventStatus.FAILED_RETRYABLE;
      error: string;
      errorClass: string;
      nextAttemptAt: number;
      /** False when the failure is not the event's (bad credentials): the attempt is not counted against its budget. */
      charged: boolean;
    };

/** What one call to 1C did, for the attempt history. */
export interface AttemptReport {
  startedAt: number;
  durationMs: number;
  outcome: string;
  httpStatus?: number | undefined;
  errorClass?: string | undefined;
  detail?: string | undefined;
}

export interface AttemptRecord {
  attempt: number;
  leaseToken: number;
  worker: string;
  startedAt: number;
  finishedAt: number | null;
  durationMs: number | null;
  outcome: string | null;
  httpStatus: number | null;
  errorClass: string | null;
  detail: string | null;
  /** False when the lease was lost before the outcome could be written. */
  applied: boolean | null;
  /** Absent in an export written before attempts had kinds: "just_in_time". */
  kind?: AttemptKind;
}

export interface ReplayRequest {
  sender: string;
  eventId: string;
  requestedBy: string;
  reason: string;
  /** Send a SUCCEEDED event again; 1C answers with the order it already has. */
  force: boolean;
  now: number;
  /**
   * Replay only while the event is still in this status: a bulk replay chose it by its status, and it
   * may have changed since (delivered meanwhile). Checked in the replay's own transaction.
   */
  expectedStatus?: EventStatus;
}

export type ReplayResult =
  | { kind: "replayed"; record: EventRecord; fromStatus: EventStatus }
  | { kind: "missing" }
  | { kind: "refused"; reason: ReplayRefusal; record: EventRecord };

/**
 * Already SUCCEEDED (replayed only with force), an attempt holds a live lease now, or the event is
 * no longer in the request's expectedStatus.
 */
export type ReplayRefusal = "succeeded" | "in_flight" | "changed";

export interface Backlog {
  pending: number;
  oldestPendingReceivedAt: number | null;
  failedFinal: number;
}

export interface ReplayRecord {
  requestedBy: string;
  reason: string;
  forced: boolean;
  fromStatus: string;
  requestedAt: number;
}

/** Which finished events a purge takes. */
export interface PurgeBound {
  /** updated_at bound, exclusive, epoch ms: when the event finished (or was last replayed). */
  olderThan: number;
  /**
   * FAILED_FINAL events too. Off for the running gateway's purge: such an
   * event was acknowledged and never booked in 1C, so it stays until support
   * replays it (it then ends SUCCEEDED and ages out) or purges it by hand.
   */
  includeFailed?: boolean;
}

export interface PurgeRequest extends PurgeBound {
  batchSize: number;
}

/** Where a page ended: the next page starts strictly before this event. */
export interface PageCursor {
  receivedAt: number;
  sender: string;
  eventId: string;
}

export interface ListFilter {
  sender?: string;
  status?: EventStatus;
  /** received_at bounds, inclusive. */
  since?: number;
  until?: number;
  limit: number;
}

export interface EventRecord {
  sender: string;
  eventId: string;
  fingerprint: string;
  policyVersion: string;
  status: EventStatus;
  correlationId: string;
  body: string;
  response: ResponseSnapshot | null;
  order: OnecOrder | null;
  lastError: string | null;
  lastErrorClass: string | null;
  attempts: number;
  finishedAttempts: number;
  roundAttempts: number;
  roundStartedAt: number;
  leaseOwner: string | null;
  leaseToken: number;
  leaseUntil: number | null;
  nextAttemptAt: number | null;
  receivedAt: number;
  updatedAt: number;
  /** The trace context it was accepted under (ReserveRequest.traceContext); undefined without one. */
  traceContext?: string | null | undefined;
}

/** The last word on whether the register can write: a probe's or a real write's. */
export interface RegisterWritability {
  readonly writable: boolean;
  /** Why not, while not writable. */
  readonly reason: string | undefined;
}

/** The register cannot durably read or write now; the sender should retry later. */
export class StorageUnavailableError extends Error {
  override readonly name = "StorageUnavailableError";
  readonly code = "GW_ERR_STORAGE_UNAVAILABLE";
}

export type StatusCountFilter = Pick<ListFilter, "sender" | "since" | "until">;

/** Everything the register holds about one event: what `gateway export` writes and `importEvent` takes. */
export interface EventSnapshot {
  record: EventRecord;
  /** By lease token, as listAttempts returns them. */
  attempts: AttemptRecord[];
  /** In the order they were requested, as listReplays returns them. */
  replays: ReplayRecord[];
  /**
   * The platform delivery the event was accepted from (source-port.ts), if
   * any: importEvent writes it with the event, accepted and under the
   * event's own key, whatever it says of those. An unmapped delivery
   * remapped to the event moves on its own (SourceDeliveryLog.importDelivery).
   */
  source?: SourceDeliveryInput;
}
