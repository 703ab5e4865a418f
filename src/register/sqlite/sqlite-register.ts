import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { EventStatus } from "../event-status.ts";
import {
  type AttemptRecord,
  type AttemptReport,
  type Backlog,
  type Claim,
  type ClaimBatch,
  type ClaimRequest,
  type EventRecord,
  type EventRegister,
  type Lease,
  type ListFilter,
  type PageCursor,
  type PurgeRequest,
  type ReplayRecord,
  type ReplayRequest,
  type ReplayResult,
  type ReserveRequest,
  type ReserveResult,
  type Settlement,
  StorageUnavailableError,
} from "../port.ts";
import { migrations } from "./migrations.ts";
import { WriteBatcher } from "./write-batcher.ts";

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
  last_error_class: string | null;
  attempts: number;
  finished_attempts: number;
  round_attempts: number;
  round_started_at: number;
  lease_owner: string | null;
  lease_token: number;
  lease_until: number | null;
  next_attempt_at: number | null;
  received_at: number;
  updated_at: number;
}

interface AttemptRow {
  attempt: number;
  lease_token: number;
  worker: string;
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  outcome: string | null;
  http_status: number | null;
  error_class: string | null;
  detail: string | null;
  applied: number | null;
}

interface ReplayRow {
  requested_by: string;
  reason: string;
  forced: number;
  from_status: string;
  requested_at: number;
}

type Statement<R> = Database.Statement<unknown[], R>;

export interface SqliteRegisterOptions {
  /** How long a writer waits for another process's write lock before giving up (503). */
  busyTimeoutMs?: number;
}

const PENDING = `status IN ('PROCESSING','FAILED_RETRYABLE')`;
const DUE = `${PENDING} AND (lease_until IS NULL OR lease_until <= @now) AND next_attempt_at <= @now`;
// Named index: a statement the planner cannot serve from it fails to prepare instead of scanning the table.
const FINISHED_BEFORE = `inbound_events INDEXED BY inbound_events_by_status
  WHERE status IN ('SUCCEEDED','FAILED_FINAL') AND updated_at < @olderThan`;

/**
 * The only place that speaks SQL to SQLite. One connection per process;
 * writes run in short BEGIN IMMEDIATE transactions, grouped by WriteBatcher so
 * that one fsync commits all the writes of an event-loop turn; several
 * processes on one file serialise on SQLite's write lock instead of failing
 * on upgrade. No transaction is ever open while 1C is called.
 */
export class SqliteRegister implements EventRegister {
  readonly #db: Database.Database;
  readonly #sql: ReturnType<typeof prepareStatements>;
  readonly #reserveTx: (request: ReserveRequest) => ReserveResult;
  readonly #claimTx: (request: ClaimRequest) => ClaimBatch;
  readonly #settleTx: (
    lease: Lease,
    settlement: Settlement,
    report: AttemptReport,
    now: number,
  ) => EventRow | undefined;
  readonly #replayTx: (request: ReplayRequest) => ReplayResult;
  readonly #purgeTx: (request: PurgeRequest) => number;
  readonly #writes: WriteBatcher;

  constructor(file: string, options: SqliteRegisterOptions = {}) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.#db = storage(() => new Database(file, { timeout: options.busyTimeoutMs ?? 5000 }));
    storage(() => {
      this.#db.pragma("journal_mode = WAL");
      // A 2xx promises the event survives power loss: fsync every commit.
      this.#db.pragma("synchronous = FULL");
      this.#db.pragma("foreign_keys = ON");
      migrate(this.#db);
    });
    const sql = prepareStatements(this.#db);
    this.#sql = sql;
    this.#writes = new WriteBatcher(this.#db);

    this.#reserveTx = (r) => {
      const inserted = sql.insert.get(r);
      if (inserted !== undefined) return { outcome: "created", record: toRecord(inserted) };
      const existing = sql.select.get(r.sender, r.eventId);
      if (existing === undefined) throw new Error("row vanished inside its own transaction");
      return { outcome: "existing", record: toRecord(existing) };
    };

    this.#claimTx = (r) => {
      const candidates =
        r.only === undefined
          ? sql.selectDue.all({ now: r.now, limit: r.limit })
          : sql.selectDueOne.all({ now: r.now, sender: r.only.sender, eventId: r.only.eventId });
      const batch: ClaimBatch = { claimed: [], ended: [] };
      for (const row of candidates) {
        const decision = r.decide(toRecord(row), r.now);
        if (!decision.go) {
          const ended = sql.endAtClaim.get({
            sender: row.sender,
            eventId: row.event_id,
            error: decision.settlement.error,
            errorClass: decision.settlement.errorClass,
            responseStatus: decision.settlement.response.status,
            responseBody: decision.settlement.response.body,
            now: r.now,
          });
          if (ended !== undefined) batch.ended.push(toRecord(ended));
          continue;
        }
        const claimed = sql.claim.get({
          sender: row.sender,
          eventId: row.event_id,
          owner: r.owner,
          leaseUntil: r.now + r.leaseMs,
          now: r.now,
        });
        if (claimed === undefined) continue;
        sql.insertAttempt.run({
          sender: claimed.sender,
          eventId: claimed.event_id,
          attempt: claimed.attempts,
          leaseToken: claimed.lease_token,
          worker: r.owner,
          startedAt: r.now,
        });
        batch.claimed.push(claimOf(claimed));
      }
      return batch;
    };

    this.#settleTx = (lease, settlement, report, now) => {
      const key = { sender: lease.sender, eventId: lease.eventId, token: lease.token, now };
      const row = settleStatement(sql, key, settlement);
      sql.finishAttempt.run({
        ...key,
        finishedAt: now,
        durationMs: report.durationMs,
        outcome: report.outcome,
        httpStatus: report.httpStatus ?? null,
        errorClass: report.errorClass ?? null,
        detail: report.detail ?? null,
        applied: row === undefined ? 0 : 1,
      });
      return row;
    };

    this.#replayTx = (r) => {
      const row = sql.select.get(r.sender, r.eventId);
      if (row === undefined) return { result: "not_found" };
      const record = toRecord(row);
      if (row.status === EventStatus.SUCCEEDED && !r.force) return { result: "refused", reason: "succeeded", record };
      if (row.lease_until !== null && row.lease_until > r.now)
        return { result: "refused", reason: "in_flight", record };
      const replayed = sql.replay.get({ sender: r.sender, eventId: r.eventId, now: r.now });
      if (replayed === undefined) throw new Error("row vanished inside its own transaction");
      sql.insertReplay.run({
        sender: r.sender,
        eventId: r.eventId,
        requestedBy: r.requestedBy,
        reason: r.reason,
        forced: r.force ? 1 : 0,
        fromStatus: row.status,
        requestedAt: r.now,
      });
      return { result: "replayed", record: toRecord(replayed), fromStatus: row.status };
    };

    // Attempts and replays go by ON DELETE CASCADE; `changes` counts only the events themselves.
    this.#purgeTx = (r) => sql.purge.run({ olderThan: r.olderThan, limit: r.batchSize }).changes;
  }

  /** Every write goes through group commit: answered only after its batch is durable. */
  #write<T>(work: () => T): Promise<T> {
    return this.#writes.submit(work).catch((error: unknown) => {
      throw asStorageError(error);
    });
  }

  async reserve(request: ReserveRequest): Promise<ReserveResult> {
    return this.#write(() => this.#reserveTx(request));
  }

  async claim(request: ClaimRequest): Promise<ClaimBatch> {
    return this.#write(() => this.#claimTx(request));
  }

  async settle(
    lease: Lease,
    settlement: Settlement,
    report: AttemptReport,
    now: number,
  ): Promise<EventRecord | undefined> {
    const row = await this.#write(() => this.#settleTx(lease, settlement, report, now));
    return row === undefined ? undefined : toRecord(row);
  }

  async replay(request: ReplayRequest): Promise<ReplayResult> {
    return this.#write(() => this.#replayTx(request));
  }

  async find(sender: string, eventId: string): Promise<EventRecord | undefined> {
    const row = storage(() => this.#sql.select.get(sender, eventId));
    return row === undefined ? undefined : toRecord(row);
  }

  async findByEventId(eventId: string): Promise<EventRecord[]> {
    return storage(() => this.#sql.selectByEventId.all(eventId)).map(toRecord);
  }

  async listReplays(sender: string, eventId: string): Promise<ReplayRecord[]> {
    return storage(() => this.#sql.selectReplays.all(sender, eventId)).map((row) => ({
      requestedBy: row.requested_by,
      reason: row.reason,
      forced: row.forced === 1,
      fromStatus: row.from_status,
      requestedAt: row.requested_at,
    }));
  }

  async page(filter: ListFilter & { before?: PageCursor }): Promise<EventRecord[]> {
    const rows = storage(() =>
      this.#sql.page.all({
        sender: filter.sender ?? null,
        status: filter.status ?? null,
        since: filter.since ?? null,
        until: filter.until ?? null,
        limit: filter.limit,
        beforeAt: filter.before?.receivedAt ?? null,
        beforeSender: filter.before?.sender ?? "",
        beforeId: filter.before?.eventId ?? "",
      }),
    );
    return rows.map(toRecord);
  }

  async listAttempts(sender: string, eventId: string): Promise<AttemptRecord[]> {
    return storage(() => this.#sql.selectAttempts.all(sender, eventId)).map(toAttempt);
  }

  async list(filter: ListFilter): Promise<EventRecord[]> {
    const rows = storage(() =>
      this.#sql.list.all({
        sender: filter.sender ?? null,
        status: filter.status ?? null,
        since: filter.since ?? null,
        until: filter.until ?? null,
        limit: filter.limit,
      }),
    );
    return rows.map(toRecord);
  }

  async purgeFinished(request: PurgeRequest): Promise<number> {
    return this.#write(() => this.#purgeTx(request));
  }

  async countFinished(request: { olderThan: number }): Promise<number> {
    return storage(() => this.#sql.countFinished.get({ olderThan: request.olderThan })?.count ?? 0);
  }

  async backlog(): Promise<Backlog> {
    const row = storage(() => this.#sql.backlog.get());
    return {
      pending: row?.pending ?? 0,
      oldestPendingReceivedAt: row?.oldest ?? null,
      failedFinal: row?.failed_final ?? 0,
    };
  }

  async ping(): Promise<void> {
    storage(() => this.#db.exec("BEGIN IMMEDIATE; ROLLBACK"));
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

function prepareStatements(db: Database.Database) {
  const fenced = `WHERE sender = @sender AND event_id = @eventId AND lease_token = @token AND ${PENDING}
                  RETURNING *`;
  const released = "lease_owner = NULL, lease_until = NULL, finished_attempts = finished_attempts + 1";
  return {
    insert: db.prepare(`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  round_started_at, next_attempt_at, received_at, updated_at)
      VALUES (@sender, @eventId, @fingerprint, @policyVersion, 'PROCESSING', @correlationId, @body,
              @now, @now, @now, @now)
      ON CONFLICT (sender, event_id) DO NOTHING
      RETURNING *`) as Statement<EventRow>,
    select: db.prepare("SELECT * FROM inbound_events WHERE sender = ? AND event_id = ?") as Statement<EventRow>,
    // Named index: the planner otherwise takes the status index and sorts every pending row on each claim.
    selectDue: db.prepare(`
      SELECT * FROM inbound_events INDEXED BY inbound_events_due WHERE ${DUE}
       ORDER BY next_attempt_at, received_at LIMIT @limit`) as Statement<EventRow>,
    selectDueOne: db.prepare(`
      SELECT * FROM inbound_events WHERE sender = @sender AND event_id = @eventId AND ${DUE}`) as Statement<EventRow>,
    claim: db.prepare(`
      UPDATE inbound_events
         SET status = 'PROCESSING', attempts = attempts + 1, round_attempts = round_attempts + 1,
             lease_owner = @owner, lease_token = lease_token + 1, lease_until = @leaseUntil, updated_at = @now
       WHERE sender = @sender AND event_id = @eventId AND ${DUE}
      RETURNING *`) as Statement<EventRow>,
    endAtClaim: db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_FINAL', last_error = @error, last_error_class = @errorClass,
             response_status = @responseStatus, response_body = @responseBody,
             lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL, updated_at = @now
       WHERE sender = @sender AND event_id = @eventId AND ${DUE}
      RETURNING *`) as Statement<EventRow>,
    settleSucceeded: db.prepare(`
      UPDATE inbound_events
         SET status = 'SUCCEEDED', order_id = @orderId, order_number = @orderNumber,
             response_status = @responseStatus, response_body = @responseBody,
             last_error = NULL, last_error_class = NULL, next_attempt_at = NULL, ${released}, updated_at = @now
       ${fenced}`) as Statement<EventRow>,
    settleFinal: db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_FINAL', last_error = @error, last_error_class = @errorClass,
             response_status = @responseStatus, response_body = @responseBody,
             next_attempt_at = NULL, ${released}, updated_at = @now
       ${fenced}`) as Statement<EventRow>,
    settleRetryable: db.prepare(`
      UPDATE inbound_events
         SET status = 'FAILED_RETRYABLE', last_error = @error, last_error_class = @errorClass,
             next_attempt_at = @nextAttemptAt, round_attempts = round_attempts - @refund, ${released},
             updated_at = @now
       ${fenced}`) as Statement<EventRow>,
    insertAttempt: db.prepare(`
      INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at)
      VALUES (@sender, @eventId, @attempt, @leaseToken, @worker, @startedAt)`),
    finishAttempt: db.prepare(`
      UPDATE delivery_attempts
         SET finished_at = @finishedAt, duration_ms = @durationMs, outcome = @outcome, http_status = @httpStatus,
             error_class = @errorClass, detail = @detail, applied = @applied
       WHERE sender = @sender AND event_id = @eventId AND lease_token = @token`),
    selectAttempts: db.prepare(`
      SELECT attempt, lease_token, worker, started_at, finished_at, duration_ms, outcome, http_status,
             error_class, detail, applied
        FROM delivery_attempts WHERE sender = ? AND event_id = ? ORDER BY lease_token`) as Statement<AttemptRow>,
    replay: db.prepare(`
      UPDATE inbound_events
         SET status = 'PROCESSING', next_attempt_at = @now, round_attempts = 0, round_started_at = @now,
             finished_attempts = attempts, response_status = NULL, response_body = NULL,
             last_error = NULL, last_error_class = NULL,
             lease_owner = NULL, lease_until = NULL, updated_at = @now
       WHERE sender = @sender AND event_id = @eventId
      RETURNING *`) as Statement<EventRow>,
    insertReplay: db.prepare(`
      INSERT INTO event_replays (sender, event_id, requested_by, reason, forced, from_status, requested_at)
      VALUES (@sender, @eventId, @requestedBy, @reason, @forced, @fromStatus, @requestedAt)`),
    backlog: db.prepare(`
      SELECT (SELECT count(*) FROM inbound_events WHERE ${PENDING}) AS pending,
             (SELECT min(received_at) FROM inbound_events WHERE ${PENDING}) AS oldest,
             (SELECT count(*) FROM inbound_events WHERE status = 'FAILED_FINAL') AS failed_final`) as Statement<{
      pending: number;
      oldest: number | null;
      failed_final: number;
    }>,
    selectByEventId: db.prepare(
      "SELECT * FROM inbound_events WHERE event_id = ? ORDER BY sender",
    ) as Statement<EventRow>,
    selectReplays: db.prepare(`
      SELECT requested_by, reason, forced, from_status, requested_at FROM event_replays
       WHERE sender = ? AND event_id = ? ORDER BY id`) as Statement<ReplayRow>,
    page: db.prepare(`
      SELECT * FROM inbound_events
       WHERE (@sender IS NULL OR sender = @sender) AND (@status IS NULL OR status = @status)
         AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at <= @until)
         AND (@beforeAt IS NULL OR (received_at, sender, event_id) < (@beforeAt, @beforeSender, @beforeId))
       ORDER BY received_at DESC, sender DESC, event_id DESC LIMIT @limit`) as Statement<EventRow>,
    list: db.prepare(`
      SELECT * FROM inbound_events
       WHERE (@sender IS NULL OR sender = @sender) AND (@status IS NULL OR status = @status)
         AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at <= @until)
       ORDER BY received_at, event_id LIMIT @limit`) as Statement<EventRow>,
    // SQLite's DELETE … LIMIT needs a compile-time flag; a rowid subquery works everywhere.
    purge: db.prepare(`
      DELETE FROM inbound_events WHERE rowid IN (SELECT rowid FROM ${FINISHED_BEFORE} LIMIT @limit)`),
    countFinished: db.prepare(`SELECT count(*) AS count FROM ${FINISHED_BEFORE}`) as Statement<{ count: number }>,
  };
}

function settleStatement(
  sql: ReturnType<typeof prepareStatements>,
  key: { sender: string; eventId: string; token: number; now: number },
  settlement: Settlement,
): EventRow | undefined {
  switch (settlement.status) {
    case EventStatus.SUCCEEDED:
      return sql.settleSucceeded.get({
        ...key,
        orderId: settlement.order.id,
        orderNumber: settlement.order.number,
        responseStatus: settlement.response.status,
        responseBody: settlement.response.body,
      });
    case EventStatus.FAILED_FINAL:
      return sql.settleFinal.get({
        ...key,
        error: settlement.error,
        errorClass: settlement.errorClass,
        responseStatus: settlement.response.status,
        responseBody: settlement.response.body,
      });
    case EventStatus.FAILED_RETRYABLE:
      return sql.settleRetryable.get({
        ...key,
        error: settlement.error,
        errorClass: settlement.errorClass,
        nextAttemptAt: settlement.nextAttemptAt,
        refund: settlement.charged ? 0 : 1,
      });
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

/** SQLite failures (busy past the timeout, disk full, I/O, read-only, closed) mean "cannot accept now". */
function storage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw asStorageError(error);
  }
}

function asStorageError(error: unknown): unknown {
  if (error instanceof Database.SqliteError || (error instanceof TypeError && /database/i.test(error.message))) {
    return new StorageUnavailableError(error.message, { cause: error });
  }
  return error;
}

function claimOf(row: EventRow): Claim {
  return {
    record: toRecord(row),
    lease: { sender: row.sender, eventId: row.event_id, owner: row.lease_owner ?? "", token: row.lease_token },
  };
}

function toAttempt(row: AttemptRow): AttemptRecord {
  return {
    attempt: row.attempt,
    leaseToken: row.lease_token,
    worker: row.worker,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    outcome: row.outcome,
    httpStatus: row.http_status,
    errorClass: row.error_class,
    detail: row.detail,
    applied: row.applied === null ? null : row.applied === 1,
  };
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
    lastErrorClass: row.last_error_class,
    attempts: row.attempts,
    finishedAttempts: row.finished_attempts,
    roundAttempts: row.round_attempts,
    roundStartedAt: row.round_started_at,
    leaseOwner: row.lease_owner,
    leaseToken: row.lease_token,
    leaseUntil: row.lease_until,
    nextAttemptAt: row.next_attempt_at,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}
