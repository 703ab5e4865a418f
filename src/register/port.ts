import type { EventStatus } from "./event-status.ts";

/**
 * The inbound event register, as the rest of the gateway sees it.
 * Every backend (SQLite now, PostgreSQL later) implements exactly this and
 * passes the same contract suite. Times are epoch milliseconds.
 */
export interface EventRegister {
  /**
   * Records a new event, or finds the one already recorded under
   * (sender, eventId), atomically. Takes the delivery lease when the event is
   * new, or pending with no live lease, no backoff left and the same fingerprint.
   * Throws StorageUnavailableError when nothing could be durably recorded.
   */
  reserve(request: ReserveRequest): Promise<ReserveResult>;

  find(sender: string, eventId: string): Promise<EventRecord | undefined>;

  /**
   * Writes the outcome of one delivery attempt, only if `lease` is still the
   * newest claim (fencing token). Returns the updated record, or undefined when
   * the lease was lost and nothing was written.
   */
  settle(lease: Lease, settlement: Settlement, now: number): Promise<EventRecord | undefined>;

  close(): Promise<void>;
}

export interface ReserveRequest {
  sender: string;
  eventId: string;
  fingerprint: string;
  policyVersion: string;
  /** Canonical JSON: the very bytes every delivery attempt sends. */
  body: string;
  correlationId: string;
  now: number;
  leaseOwner: string;
  leaseMs: number;
}

export type ReserveResult =
  | { outcome: "created"; record: EventRecord; lease: Lease }
  | { outcome: "claimed"; record: EventRecord; lease: Lease }
  | { outcome: "existing"; record: EventRecord };

export interface Lease {
  sender: string;
  eventId: string;
  owner: string;
  /** Grows on every claim; a settle with an older token writes nothing. */
  token: number;
}

export interface OnecOrder {
  id: string;
  number: string;
}

export interface ResponseSnapshot {
  status: number;
  body: string;
}

export type Settlement =
  | { status: typeof EventStatus.SUCCEEDED; order: OnecOrder; response: ResponseSnapshot }
  | { status: typeof EventStatus.FAILED_FINAL; error: string; response: ResponseSnapshot }
  | { status: typeof EventStatus.FAILED_RETRYABLE; error: string; nextAttemptAt: number };

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
  attempts: number;
  leaseOwner: string | null;
  leaseToken: number;
  leaseUntil: number | null;
  nextAttemptAt: number | null;
  receivedAt: number;
  updatedAt: number;
}

/** The register cannot durably read or write now; the sender should retry later. */
export class StorageUnavailableError extends Error {
  override readonly name = "StorageUnavailableError";
  readonly code = "GW_ERR_STORAGE_UNAVAILABLE";
}
