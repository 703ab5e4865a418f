import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { EventStatus } from "../event-status.ts";
import {
  type AttemptRecord,
  type AttemptReport,
  type Backlog,
  type Claim,
  type ClaimRequest,
  type EventChange,
  type EventRecord,
  type EventRegister,
  type EventSnapshot,
  type Lease,
  type ListFilter,
  type PageCursor,
  type PurgeRequest,
  type RegisterChange,
  type ReplayRecord,
  type ReplayRequest,
  type ReplayResult,
  type ReserveRequest,
  type ReserveResult,
  type SessionStore,
  type Settlement,
  type StatusCountFilter,
  StorageUnavailableError,
  statusCounts,
} from "../port.ts";
import { claimOf, toAttempt, toRecord, toReplay } from "../rows.ts";
import { searchRows } from "../search-term.ts";
import { type ImportStatements, importSnapshot, prepareImportStatements } from "./import-events.ts";
import { migrations } from "./migrations.ts";
import { ReadBatcher } from "./read-batcher.ts";
import { SqliteSessionStore } from "./session-store.ts";
import { filterParams, prepareStatements, type Statements, settleStatement } from "./statements.ts";
import { WriteBatcher } from "./write-batcher.ts";

export interface SqliteRegisterOptions {
  /** How long a writer waits for another process's write lock before giving up (503). */
  busyTimeoutMs?: number;
}

/**
 * The register on SQLite; its SQL is in statements.ts. One connection per
 * process; writes run in short BEGIN IMMEDIATE transactions, grouped by
 * WriteBatcher so that one fsync commits all the writes of an event-loop
 * turn; several processes on one file serialise on SQLite's write lock
 * instead of failing on upgrade. No transaction is ever open while 1C is called.
 */
export class SqliteRegister implements EventRegister {
  readonly #db: Database.Database;
  readonly #sql: Statements;
  readonly #writes: WriteBatcher;
  readonly #reads: ReadBatcher;
  readonly #watchers = new Set<(change: RegisterChange) => void>();
  readonly sessions: SessionStore;

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
    this.#sql = prepareStatements(this.#db);
    this.#writes = new WriteBatcher(this.#db);
    this.#reads = new ReadBatcher(this.#db, () => this.#writes.flushQueued());
    this.sessions = new SqliteSessionStore(this.#db, { write: (work) => this.#write(work), read: storage });
  }

  /** Every write goes through group commit: answered only after its batch is durable. */
  #write<T>(work: () => T): Promise<T> {
    return this.#writes.submit(work).catch((error: unknown) => {
      throw asStorageError(error);
    });
  }

  async reserve(request: ReserveRequest): Promise<ReserveResult> {
    const sql = this.#sql;
    const result = await this.#write((): ReserveResult => {
      const inserted = sql.insert.get(request);
      if (inserted !== undefined) return { outcome: "created", record: toRecord(inserted) };
      const existing = sql.select.get(request.sender, request.eventId);
      if (existing === undefined) throw new Error("row vanished inside its own transaction");
      return { outcome: "existing", record: toRecord(existing) };
    });
    if (result.outcome === "created") this.#changed("recorded", result.record);
    return result;
  }

  watch(listener: (change: RegisterChange) => void): () => void {
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  /** After the commit, never inside the transaction: a woken waiter must find the change. */
  #changed(kind: EventChange["kind"], record: EventRecord): void {
    this.#tell({ kind, sender: record.sender, eventId: record.eventId, status: record.status });
  }

  #tell(change: RegisterChange): void {
    for (const listener of this.#watchers) listener(change);
  }

  async claim(request: ClaimRequest): Promise<Claim[]> {
    const sql = this.#sql;
    const { now, owner } = request;
    return this.#write((): Claim[] => {
      const candidates =
        request.only === undefined
          ? sql.selectDue.all({ now, limit: request.limit })
          : sql.selectDueOne.all({ now, sender: request.only.sender, eventId: request.only.eventId });
      const claims: Claim[] = [];
      for (const row of candidates) {
        const claimed = sql.claim.get({
          sender: row.sender,
          eventId: row.event_id,
          now,
          owner,
          leaseUntil: now + request.leaseMs,
        });
        if (claimed === undefined) continue;
        sql.insertAttempt.run({
          sender: claimed.sender,
          eventId: claimed.event_id,
          attempt: claimed.attempts,
          leaseToken: claimed.lease_token,
          worker: owner,
          startedAt: now,
        });
        claims.push(claimOf(claimed));
      }
      return claims;
    });
  }

  async settle(
    lease: Lease,
    settlement: Settlement,
    report: AttemptReport,
    now: number,
  ): Promise<EventRecord | undefined> {
    const sql = this.#sql;
    const row = await this.#write(() => {
      const key = { sender: lease.sender, eventId: lease.eventId, token: lease.token, now };
      const settled = settleStatement(sql, key, settlement);
      // The attempt's own history row is written even when the lease was lost.
      sql.finishAttempt.run({
        ...key,
        finishedAt: now,
        durationMs: report.durationMs,
        outcome: report.outcome,
        httpStatus: report.httpStatus ?? null,
        errorClass: report.errorClass ?? null,
        detail: report.detail ?? null,
        applied: settled === undefined ? 0 : 1,
      });
      return settled;
    });
    if (row === undefined) return undefined;
    const record = toRecord(row);
    this.#changed("settled", record);
    return record;
  }

  async bringForwardRetries(now: number): Promise<number> {
    const count = await this.#write(() => this.#sql.bringForward.run({ now }).changes);
    if (count > 0) this.#tell({ kind: "rescheduled", count });
    return count;
  }

  async replay(request: ReplayRequest): Promise<ReplayResult> {
    const sql = this.#sql;
    const { sender, eventId, now } = request;
    const result = await this.#write((): ReplayResult => {
      const row = sql.select.get(sender, eventId);
      if (row === undefined) return { result: "not_found" };
      const record = toRecord(row);
      if (row.status === EventStatus.SUCCEEDED && !request.force)
        return { result: "refused", reason: "succeeded", record };
      if (row.lease_until !== null && row.lease_until > now) return { result: "refused", reason: "in_flight", record };
      const replayed = sql.replay.get({ sender, eventId, now });
      if (replayed === undefined) throw new Error("row vanished inside its own transaction");
      sql.insertReplay.run({
        sender,
        eventId,
        requestedBy: request.requestedBy,
        reason: request.reason,
        forced: request.force ? 1 : 0,
        fromStatus: row.status,
        requestedAt: now,
      });
      return { result: "replayed", record: toRecord(replayed), fromStatus: row.status };
    });
    if (result.result === "replayed") this.#changed("replayed", result.record);
    return result;
  }

  async purgeFinished(request: PurgeRequest): Promise<number> {
    // Attempts and replays go by ON DELETE CASCADE; `changes` counts only the events themselves.
    return this.#write(() => this.#sql.purge.run({ olderThan: request.olderThan, limit: request.batchSize }).changes);
  }

  async find(sender: string, eventId: string): Promise<EventRecord | undefined> {
    // Every request's first read (a repeat is answered from it): grouped per turn, see ReadBatcher.
    const row = await this.#reads
      .submit(() => this.#sql.select.get(sender, eventId))
      .catch((error: unknown) => {
        throw asStorageError(error);
      });
    return row === undefined ? undefined : toRecord(row);
  }

  async findByEventId(eventId: string): Promise<EventRecord[]> {
    return storage(() => this.#sql.selectByEventId.all(eventId)).map(toRecord);
  }

  async listReplays(sender: string, eventId: string): Promise<ReplayRecord[]> {
    return storage(() => this.#sql.selectReplays.all(sender, eventId)).map(toReplay);
  }

  async listAttempts(sender: string, eventId: string): Promise<AttemptRecord[]> {
    return storage(() => this.#sql.selectAttempts.all(sender, eventId)).map(toAttempt);
  }

  async list(filter: ListFilter): Promise<EventRecord[]> {
    return storage(() => this.#sql.list.all(filterParams(filter))).map(toRecord);
  }

  async page(filter: ListFilter & { before?: PageCursor }): Promise<EventRecord[]> {
    return storage(() => this.#sql.page.all(filterParams(filter))).map(toRecord);
  }

  async search(term: string, limit: number): Promise<EventRecord[]> {
    const rows = searchRows(term, limit);
    if (rows === 0) return [];
    return storage(() => this.#sql.search.all({ term, limit: rows })).map(toRecord);
  }

  async countFinished(request: { olderThan: number }): Promise<number> {
    return storage(() => this.#sql.countFinished.get({ olderThan: request.olderThan })?.count ?? 0);
  }

  async countByStatus(filter: StatusCountFilter): Promise<Record<EventStatus, number>> {
    const bounds = { sender: filter.sender ?? null, since: filter.since ?? null, until: filter.until ?? null };
    return statusCounts(storage(() => this.#sql.countByStatus.all(bounds)));
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

  /** Prepared on first use: only `gateway import` writes snapshots. */
  #importStatements: ImportStatements | undefined;

  async importEvent(snapshot: EventSnapshot): Promise<"imported" | "present"> {
    this.#importStatements ??= storage(() => prepareImportStatements(this.#db));
    const sql = this.#importStatements;
    // Its own savepoint in the batch: a snapshot that fails leaves nothing of itself.
    const row = await this.#write(() => importSnapshot(sql, snapshot));
    if (row === undefined) return "present";
    if (row.status === EventStatus.PROCESSING || row.status === EventStatus.FAILED_RETRYABLE) {
      this.#changed("recorded", toRecord(row));
    }
    return "imported";
  }
}

/** Returns the names of the migrations applied now. */
function migrate(db: Database.Database): string[] {
  // Several gateways may start at once on one file: the immediate transaction
  // makes the second wait and then see the version the first one wrote.
  return db
    .transaction(() => {
      const current = db.pragma("user_version", { simple: true }) as number;
      const applied: string[] = [];
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        db.exec(migration.sql);
        db.pragma(`user_version = ${migration.version}`);
        applied.push(migration.name);
      }
      return applied;
    })
    .immediate();
}

/** `gateway migrate` on SQLite: brings the file's schema up to date and says what it applied. */
export function migrateSqliteFile(file: string): string[] {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const db = storage(() => new Database(file, { timeout: 5000 }));
  try {
    return storage(() => {
      db.pragma("journal_mode = WAL");
      return migrate(db);
    });
  } finally {
    db.close();
  }
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
