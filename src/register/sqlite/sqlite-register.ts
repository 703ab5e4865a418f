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
import { migrations } from "./migrations.ts";
import { openConnection } from "./open-connection.ts";
import { ReadBatcher } from "./read-batcher.ts";
import { SqliteSessionStore } from "./session-store.ts";
import { filterParams, prepareStatements, type Statements } from "./statements.ts";
import type { Durability, WriteRunner } from "./write-ops.ts";
import { openWriter, type Writer } from "./writer.ts";

export interface SqliteRegisterOptions {
  /** How long a writer waits for another process's write lock before giving up (503). */
  busyTimeoutMs?: number;
}

/**
 * The register on SQLite; its SQL is in statements.ts, its writes in
 * write-ops.ts. Reads run on this thread's connection (WAL: they never wait
 * for a writer). Writes run in short BEGIN IMMEDIATE transactions on a
 * writer thread's connection (writer.ts), grouped so that one fsync commits
 * a whole batch while this thread goes on with the next requests; several
 * processes on one file serialise on SQLite's write lock instead of failing
 * on upgrade. No transaction is ever open while 1C is called.
 */
export class SqliteRegister implements EventRegister {
  readonly #db: Database.Database;
  readonly #sql: Statements;
  readonly #writer: Writer;
  readonly #reads: ReadBatcher;
  readonly #watchers = new Set<(change: RegisterChange) => void>();
  readonly sessions: SessionStore;

  constructor(file: string, options: SqliteRegisterOptions = {}) {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    this.#db = storage(() => openConnection(file, options.busyTimeoutMs ?? 5000, migrate));
    this.#sql = prepareStatements(this.#db);
    this.#writer = openWriter(this.#db, { file, busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
    this.#reads = new ReadBatcher(this.#db, () => this.#writer.flushQueued());
    this.sessions = new SqliteSessionStore(this.#db, { write: this.#write, read: storage });
  }

  /** Every write goes through group commit: answered only after its batch is durable. */
  readonly #write: WriteRunner = (op, args) =>
    this.#writer.run(op, args).catch((error: unknown) => {
      throw asStorageError(error);
    });

  async reserve(request: ReserveRequest): Promise<ReserveResult> {
    const { created, row } = await this.#write("reserve", request);
    const record = toRecord(row);
    if (created) this.#changed("recorded", record);
    return { outcome: created ? "created" : "existing", record };
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
    return (await this.#write("claim", request)).map(claimOf);
  }

  async settle(
    lease: Lease,
    settlement: Settlement,
    report: AttemptReport,
    now: number,
  ): Promise<EventRecord | undefined> {
    const row = await this.#write("settle", { lease, settlement, report, now });
    if (row === undefined) return undefined;
    const record = toRecord(row);
    this.#changed("settled", record);
    return record;
  }

  async bringForwardRetries(now: number): Promise<number> {
    const count = await this.#write("bringForward", { now });
    if (count > 0) this.#tell({ kind: "rescheduled", count });
    return count;
  }

  async replay(request: ReplayRequest): Promise<ReplayResult> {
    const outcome = await this.#write("replay", request);
    switch (outcome.result) {
      case "not_found":
        return outcome;
      case "refused":
        return { result: "refused", reason: outcome.reason, record: toRecord(outcome.row) };
      case "replayed": {
        const record = toRecord(outcome.row);
        this.#changed("replayed", record);
        return { result: "replayed", record, fromStatus: outcome.fromStatus };
      }
    }
  }

  async purgeFinished(request: PurgeRequest): Promise<number> {
    return this.#write("purgeFinished", request);
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
    await this.#write("ping", null);
  }

  /** What the writing connection really runs with, for diagnostics: pragmas fail silently on some file systems. */
  async durability(): Promise<Durability> {
    return this.#write("durability", null);
  }

  async close(): Promise<void> {
    await this.#writer.close();
    if (this.#db.open) this.#db.close();
  }

  async importEvent(snapshot: EventSnapshot): Promise<"imported" | "present"> {
    // Its own savepoint in the batch: a snapshot that fails leaves nothing of itself.
    const row = await this.#write("importEvent", snapshot);
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
  let applied: string[] = [];
  const db = storage(() =>
    openConnection(file, 5000, (connection) => {
      applied = migrate(connection);
    }),
  );
  db.close();
  return applied;
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
