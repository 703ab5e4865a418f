import type * as port from "./port.ts";
import type { AttemptRow, EventRow, ReplayRow } from "./rows.ts";
import type { ImportRows } from "./rules.ts";
import type { SessionStore } from "./session-port.ts";
import type { SourceDeliveryLog } from "./source-port.ts";

/**
 * What a register backend implements: its statements, port by port, on rows
 * (rows.ts). The rules they share are in rules.ts; the records, the change
 * notices and the rest of the port are RegisterCore's (register-core.ts).
 * Each method is one short write transaction or one read.
 */

/** The queue (port.ts, EventQueue). */
export interface QueueStatements {
  /** Inserts the event (PROCESSING, due now) unless (sender, event_id) is there; returns the row either way. */
  reserve(request: port.ReserveRequest): Promise<{ created: boolean; row: EventRow }>;
  /** Leases due events (pending, lease free, next_attempt_at passed) with the next token; opens each one's attempt row. */
  claim(request: port.ClaimRequest): Promise<EventRow[]>;
  /** Writes settledColumns and settleReleases under the fence, and the attempt's row either way; the row if it landed. */
  settle(
    lease: port.Lease,
    settlement: port.Settlement,
    report: port.AttemptReport,
    now: number,
  ): Promise<EventRow | undefined>;
  /** Waiting retries (FAILED_RETRYABLE, not leased) due now; how many. */
  bringForward(now: number): Promise<number>;
  /** Locks the row, asks replayRefusal, then writes replayedColumns and replayAudit: one transaction. */
  replay(request: port.ReplayRequest): Promise<ReplayRows>;
}

export type ReplayRows =
  | { kind: "replayed"; row: EventRow; fromStatus: EventRow["status"] }
  | { kind: "missing" }
  | { kind: "refused"; reason: port.ReplayRefusal; row: EventRow };

/** The event store and its search (port.ts, EventStore). */
export interface StoreStatements {
  find(sender: string, eventId: string): Promise<EventRow | undefined>;
  findByEventId(eventId: string): Promise<EventRow[]>;
  list(filter: port.ListFilter): Promise<EventRow[]>;
  page(filter: port.ListFilter & { before?: port.PageCursor }): Promise<EventRow[]>;
  /** Called only with a term that can match (rules.ts, searchRows) and `limit` rows at most. */
  search(term: string, limit: number): Promise<EventRow[]>;
  countByStatus(filter: port.StatusCountFilter): Promise<{ status: string; count: number }[]>;
  backlog(): Promise<port.Backlog>;
}

/** Audit (port.ts, AuditTrail): by lease token, and in the order requested. */
export interface AuditStatements {
  attempts(sender: string, eventId: string): Promise<AttemptRow[]>;
  replays(sender: string, eventId: string): Promise<ReplayRow[]>;
}

/** Maintenance (port.ts, RegisterMaintenance). */
export interface MaintenanceStatements {
  /** One batch of purgeable events (rules.ts, purgeableStatuses) updated before olderThan, with their attempts and replays. */
  purge(request: port.PurgeRequest): Promise<number>;
  countFinished(bound: port.PurgeBound): Promise<number>;
  /** All rows in one transaction; undefined (nothing written) when (sender, event_id) is there. */
  importEvent(rows: ImportRows): Promise<EventRow | undefined>;
}

/** Where committed changes are told: this instance's watchers, and other instances' where the backend can reach them. */
export interface ChangeFeed {
  watch(listener: (change: port.RegisterChange) => void): () => void;
  /** A change this instance committed: told to its watchers now (and published, where there are others). */
  local(change: port.RegisterChange): void;
}

export interface BackendStatements {
  queue: QueueStatements;
  store: StoreStatements;
  audit: AuditStatements;
  maintenance: MaintenanceStatements;
  sessions: SessionStore;
  sources: SourceDeliveryLog;
  hitCounter?: port.HitCounter;
  feed: ChangeFeed;
  /** The write lock can be taken now; throws StorageUnavailableError if not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
