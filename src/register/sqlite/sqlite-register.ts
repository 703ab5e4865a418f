import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { EventStatus } from "../event-status.ts";
import {
  type EventRecord,
  type EventRegister,
  type Lease,
  type ReserveRequest,
  type ReserveResult,
  type Settlement,
  StorageUnavailableError,
} from "../port.ts";
import { migrations } from "./migrations.ts";

interface EventRow {
  sender: string;
  event_id: string;
  fingerprint: string;
  policy_version: string;
  status: EventStatus;
  correlation_id: string;
  body: string;
  response_status: number | null;
  response_body: string | null;
  order_id: string | null;
  order_number: string | null;
  last_error: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_token: number;
  lease_until: number | null;
  next_attempt_at: number | null;
  received_at: number;
  updated_at: number;
}

export interface SqliteRegisterOptions {
  /** How long a writer waits for another process's write lock before giving up (503). */
  busyTimeoutMs?: number;
}

/**
 * The only place that speaks SQL to SQLite. One connection per process;
 * every write is a short BEGIN IMMEDIATE transaction, so several processes on
 * one file serialise on SQLite's write lock instead of failing on upgrade.
 */
export class SqliteRegister implements EventRegister {
  readonly #db: Database.Database;
  readonly #insert: Database.Statement<unknown[], EventRow>;
  readonly #select: Database.Statement<unknown[], EventRow>;
  readonly #claim: Database.Statement<unknown[], EventRow>;
  readonly #settleSucceeded: Database.Statement<unknown[], EventRow>;
  readonly #settleFinal: Database.Statement<unknown[], EventRow>;
  readonly #settleRetryable: Database.Statement<unknown[], EventRow>;
  readonly #reserveTx: (request: ReserveRequest) => ReserveResult;

  constructor(file: string, options: SqliteRegisterOptions = {}) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.#db = storage(() => new Database(file, { timeout: options.busyTimeoutMs ?? 5000 }));
    storage(() => {
      this.#db.pragma("journal_mode = WAL");
      // A 2xx promises the event survives power loss: fsync every commit.
      this.#db.pragma("synchronous = FULL");
      migrate(this.#db);
    });

    this.#insert = this.#db.prepare(`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  attempts, lease_owner, lease_token, lease_until, received_at, updated_at)
      VALUES (@sender, @eventId, @fingerprint, @policyVersion, 'PROCESSING', @correlationId, @body,
              1, @leaseOwner, 1, @leaseUntil, @now, @now)
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *`);
    this.#select = this.#db.prepare("SELECT * FROM inbound_events WHERE sender = ? AND event_id = ?");
    this.#claim = this.#db.prepare(`
      UPDATE inbound_events
         SET attempts = attempts + 1, lease_owner = @leaseOwner, lease_token = lease_token + 1,
             lease_until = @leaseUntil, updated_at = @now
       WHERE sender = @sender AND event_id = @eventId AND fingerprint = @fingerprint
         AND status IN ('PROCESSING','FAILED_RETRYABLE')
         AND (lease_until IS NULL OR lease_until <= @now)
         AND (next_attempt_at IS NULL OR next_attempt_at <= @now)
      RETURNING *`);
    const fenced = `WHERE sender = @sender AND event_id = @eventId AND lease_token = @token
                      AND status IN ('PROCESSING','FAILED_RETRYABLE') RETURNING *`;
    this.#settleSucceeded = this.#db.prepare(`
      UPDATE inbound_events
         SET status = 'SUCCEEDED', order_id = @orderId, order_number = @orderNumber,
             response_status = @responseStatus, response_body = @responseBody, last_error = NULL,
             lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL, updated_at = @now
       ${fenced}`);
    this.#settleFinal = this.#db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_FINAL', last_error = @error,
             response_status = @responseStatus, response_body = @responseBody,
             lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL, updated_at = @now
       ${fenced}`);
    this.#settleRetryable = this.#db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_RETRYABLE', last_error = @error,
             lease_owner = NULL, lease_until = NULL, next_attempt_at = @nextAttemptAt, updated_at = @now
       ${fenced}`);

    const reserve = (request: ReserveRequest): ReserveResult => {
      const params = { ...request, leaseUntil: request.now + request.leaseMs };
      const inserted = this.#insert.get(params);
      if (inserted !== undefined) return { outcome: "created", record: toRecord(inserted), lease: leaseOf(inserted) };
      const claimed = this.#claim.get(params);
      if (claimed !== undefined) return { outcome: "claimed", record: toRecord(claimed), lease: leaseOf(claimed) };
      const existing = this.#select.get(request.sender, request.eventId);
      if (existing === undefined) throw new Error("row vanished inside its own transaction");
      return { outcome: "existing", record: toRecord(existing) };
    };
    this.#reserveTx = (request) => this.#db.transaction(reserve).immediate(request);
  }

  async reserve(request: ReserveRequest): Promise<ReserveResult> {
    return storage(() => this.#reserveTx(request));
  }

  async find(sender: string, eventId: string): Promise<EventRecord | undefined> {
    const row = storage(() => this.#select.get(sender, eventId));
    return row === undefined ? undefined : toRecord(row);
  }

  async settle(lease: Lease, settlement: Settlement, now: number): Promise<EventRecord | undefined> {
    const key = { sender: lease.sender, eventId: lease.eventId, token: lease.token, now };
    const row = storage(() => {
      switch (settlement.status) {
        case EventStatus.SUCCEEDED:
          return this.#settleSucceeded.get({
            ...key,
            orderId: settlement.order.id,
            orderNumber: settlement.order.number,
            responseStatus: settlement.response.status,
            responseBody: settlement.response.body,
          });
        case EventStatus.FAILED_FINAL:
          return this.#settleFinal.get({
            ...key,
            error: settlement.error,
            responseStatus: settlement.response.status,
            responseBody: settlement.response.body,
          });
        case EventStatus.FAILED_RETRYABLE:
          return this.#settleRetryable.get({
            ...key,
            error: settlement.error,
            nextAttemptAt: settlement.nextAttemptAt,
          });
      }
    });
    return row === undefined ? undefined : toRecord(row);
  }

  /** What the connection really runs with, for diagnostics: pragmas fail silently on some file systems. */
  durability(): { journalMode: string; synchronous: "OFF" | "NORMAL" | "FULL" | "EXTRA" } {
    const journalMode = String(this.#db.pragma("journal_mode", { simple: true }));
    const level = Number(this.#db.pragma("synchronous", { simple: true }));
    return { journalMode, synchronous: (["OFF", "NORMAL", "FULL", "EXTRA"] as const)[level] ?? "OFF" };
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}

function migrate(db: Database.Database): void {
  // Several gateways may start at once on one file: the immediate transaction
  // makes the second wait and then see the version the first one wrote.
  db.transaction(() => {
    const current = db.pragma("user_version", { simple: true }) as number;
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }
  }).immediate();
}

/** SQLite failures (busy past the timeout, disk full, I/O, read-only) mean "cannot accept now". */
function storage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof Database.SqliteError || (error instanceof TypeError && /database/i.test(error.message))) {
      throw new StorageUnavailableError(error.message, { cause: error });
    }
    throw error;
  }
}

function leaseOf(row: EventRow): Lease {
  return { sender: row.sender, eventId: row.event_id, owner: row.lease_owner ?? "", token: row.lease_token };
}

function toRecord(row: EventRow): EventRecord {
  return {
    sender: row.sender,
    eventId: row.event_id,
    fingerprint: row.fingerprint,
    policyVersion: row.policy_version,
    status: row.status,
    correlationId: row.correlation_id,
    body: row.body,
    response:
      row.response_status === null || row.response_body === null
        ? null
        : { status: row.response_status, body: row.response_body },
    order: row.order_id === null || row.order_number === null ? null : { id: row.order_id, number: row.order_number },
    lastError: row.last_error,
    attempts: row.attempts,
    leaseOwner: row.lease_owner,
    leaseToken: row.lease_token,
    leaseUntil: row.lease_until,
    nextAttemptAt: row.next_attempt_at,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}
