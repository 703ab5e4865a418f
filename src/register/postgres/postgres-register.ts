import { randomUUID } from "node:crypto";
import postgres from "postgres";
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
  type HitCounter,
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
import { claimOf, type EventRow, toAttempt, toRecord, toReplay } from "../rows.ts";
import { searchRows } from "../search-term.ts";
import { ChangeFeed } from "./change-feed.ts";
import { importSnapshot } from "./import-events.ts";
import { migrate } from "./migrate.ts";
import { PostgresSessionStore } from "./session-store.ts";
import * as q from "./statements.ts";
import { storage } from "./storage-errors.ts";
import { TickBatcher } from "./tick-batcher.ts";

interface SettleJob {
  params: q.SettleParams;
  settlement: Settlement;
}

/** The settled row, or none when the lease was lost (a batch's answer is never undefined itself). */
interface SettleDone {
  row: EventRow | undefined;
}

/** One string per (sender, event_id): for maps, and for one order all batches agree on. */
function eventKey(sender: string, eventId: string): string {
  return `${sender}\u0000${eventId}`;
}

function compareKeys(a: SettleJob, b: SettleJob): number {
  const left = eventKey(a.params.sender, a.params.eventId);
  const right = eventKey(b.params.sender, b.params.eventId);
  return left < right ? -1 : left > right ? 1 : 0;
}

export interface PostgresRegisterOptions {
  /** Connections in the pool (not counting the one LISTEN connection). */
  poolMax: number;
  /** How long opening a connection may take before the call fails with StorageUnavailableError. */
  connectTimeoutSeconds?: number;
  /** Whose clock stamps leases and due times (statements.ts, ClockSource); the database's by default. */
  clock?: q.ClockSource;
}

/**
 * The register on a PostgreSQL server; its SQL is in statements.ts, its
 * schema in migrations/*.sql. Several gateway instances and workers share one
 * database: claims lock with SKIP LOCKED, settles are fenced by the lease
 * token, and changes are told to every instance through LISTEN/NOTIFY.
 * Each write is one autocommit statement (replay: one short transaction; the
 * reservations and the outcomes of one event-loop turn: one statement or one
 * transaction for all), so a method resolves only after its commit, with
 * synchronous_commit on.
 * No transaction is ever open while 1C is called. Times are epoch ms, as the
 * port defines them, but stamped with the database's clock (unless opened
 * with clock "node"): every instance then measures leases and due times
 * against one clock, whatever its own says. The callers' values still carry
 * the policy's delays (a retry's backoff), measured from the callers' now.
 */
export class PostgresRegister implements EventRegister {
  readonly #sql: q.Sql;
  readonly #feed: ChangeFeed;
  readonly #clock: q.ClockSource;
  readonly #reservations = new TickBatcher<ReserveRequest, ReserveResult>((batch) => this.#reserveBatch(batch));
  readonly #settles = new TickBatcher<SettleJob, SettleDone>((batch) => this.#settleBatch(batch));
  #closing: Promise<void> | undefined;
  readonly sessions: SessionStore;

  private constructor(sql: q.Sql, feed: ChangeFeed, clock: q.ClockSource) {
    this.#sql = sql;
    this.#feed = feed;
    this.#clock = clock;
    this.sessions = new PostgresSessionStore(sql, clock);
  }

  /** Connects, applies missing migrations (under an advisory lock) and starts listening. */
  static async open(url: string, options: PostgresRegisterOptions): Promise<PostgresRegister> {
    const connectTimeoutSeconds = options.connectTimeoutSeconds ?? 5;
    const sql = postgres(url, {
      max: options.poolMax,
      connect_timeout: connectTimeoutSeconds,
      idle_timeout: 60,
      onnotice: () => {},
      types: {
        // int8: epoch milliseconds, tokens and counts, all far below 2^53.
        bigint: {
          to: 20,
          from: [20],
          serialize: (value: number) => String(value),
          parse: (raw: string) => Number(raw),
        },
      },
      connection: {
        application_name: "onec-order-gateway",
        // A 2xx promises the event is durable: never let a database default turn this off.
        synchronous_commit: "on",
      },
    });
    try {
      await storage(() => migrate(sql));
      const feed = await storage(() =>
        ChangeFeed.start(url, randomUUID(), connectTimeoutSeconds, (notices) => q.publish(sql, notices)),
      );
      return new PostgresRegister(sql, feed, options.clock ?? "database");
    } catch (error) {
      await sql.end({ timeout: 0 });
      throw error;
    }
  }

  async reserve(request: ReserveRequest): Promise<ReserveResult> {
    const result = await storage(() => this.#reservations.submit(request));
    if (result.outcome === "created") this.#changed("recorded", result.record);
    return result;
  }

  /**
   * The reservations of one event-loop turn: one INSERT for all, then one
   * SELECT for the keys that were there already. Read committed: a
   * concurrent insert of the same key makes ours wait for its commit and do
   * nothing; the SELECT, a new statement, then sees that row.
   */
  async #reserveBatch(batch: readonly ReserveRequest[]): Promise<ReserveResult[]> {
    const params = batch.map((request) => ({ ...request, clock: this.#clock }));
    const inserted = await q.insertEvents(this.#sql, params, this.#clock);
    const createdAt = new Map(inserted.map(({ ord, ...row }) => [ord - 1, row]));
    const others = batch.filter((_, index) => !createdAt.has(index));
    const existing = others.length === 0 ? [] : await q.selectEvents(this.#sql, others);
    const existingByKey = new Map(existing.map((row) => [eventKey(row.sender, row.event_id), row]));
    return Promise.all(
      batch.map(async (request, index): Promise<ReserveResult> => {
        const created = createdAt.get(index);
        if (created !== undefined) return { outcome: "created", record: toRecord(created) };
        const row = existingByKey.get(eventKey(request.sender, request.eventId));
        if (row !== undefined) return { outcome: "existing", record: toRecord(row) };
        return this.#reserveAlone(request);
      }),
    );
  }

  /** Purged between the batch's two statements: the key is free again, so insert once more, alone. */
  async #reserveAlone(request: ReserveRequest): Promise<ReserveResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await q.insertEvent(this.#sql, { ...request, clock: this.#clock });
      if (inserted !== undefined) return { outcome: "created", record: toRecord(inserted) };
      const existing = await q.selectEvent(this.#sql, request.sender, request.eventId);
      if (existing !== undefined) return { outcome: "existing", record: toRecord(existing) };
    }
    throw new Error(`event ${request.eventId} keeps vanishing between insert and select`);
  }

  watch(listener: (change: RegisterChange) => void): () => void {
    return this.#feed.watch(listener);
  }

  /** After the commit, never inside the transaction: a woken waiter must find the change. */
  #changed(kind: EventChange["kind"], record: EventRecord): void {
    this.#feed.local({ kind, sender: record.sender, eventId: record.eventId, status: record.status });
  }

  async claim(request: ClaimRequest): Promise<Claim[]> {
    const rows = await storage(() =>
      q.claimDue(this.#sql, {
        owner: request.owner,
        now: request.now,
        clock: this.#clock,
        leaseMs: request.leaseMs,
        limit: request.limit,
        only: request.only,
      }),
    );
    return rows.map(claimOf);
  }

  async settle(
    lease: Lease,
    settlement: Settlement,
    report: AttemptReport,
    now: number,
  ): Promise<EventRecord | undefined> {
    const params: q.SettleParams = {
      sender: lease.sender,
      eventId: lease.eventId,
      token: lease.token,
      now,
      clock: this.#clock,
      durationMs: report.durationMs,
      outcome: report.outcome,
      httpStatus: report.httpStatus ?? null,
      errorClass: report.errorClass ?? null,
      detail: report.detail ?? null,
    };
    const { row } = await storage(() => this.#settles.submit({ params, settlement }));
    if (row === undefined) return undefined;
    const record = toRecord(row);
    this.#changed("settled", record);
    return record;
  }

  /**
   * The outcomes of one event-loop turn: one transaction with its statements
   * pipelined, so one round trip and one commit (one WAL flush) serve them
   * all. Each stays fenced by its own lease token. In key order, so two
   * workers' batches never take the same rows in opposite orders.
   */
  async #settleBatch(batch: readonly SettleJob[]): Promise<SettleDone[]> {
    if (batch.length === 1) {
      const [job] = batch as [SettleJob];
      return [{ row: await q.settleEvent(this.#sql, job.params, job.settlement) }];
    }
    const sorted = batch.map((job, index) => ({ job, index })).sort((a, b) => compareKeys(a.job, b.job));
    const rows = await this.#sql.begin((tx) =>
      Promise.all(sorted.map(({ job }) => q.settleEvent(tx, job.params, job.settlement))),
    );
    const done: SettleDone[] = [];
    sorted.forEach(({ index }, position) => {
      done[index] = { row: rows[position] };
    });
    return done;
  }

  async bringForwardRetries(now: number): Promise<number> {
    const count = await storage(() => q.bringForward(this.#sql, { now, clock: this.#clock }));
    if (count > 0) this.#feed.local({ kind: "rescheduled", count });
    return count;
  }

  async replay(request: ReplayRequest): Promise<ReplayResult> {
    const { sender, eventId, now } = request;
    // One short transaction: the row is locked while the refusals are decided on it.
    const result = await storage(() =>
      this.#sql.begin(async (tx): Promise<ReplayResult> => {
        const locked = await q.selectEventForUpdate(tx, sender, eventId, { now, clock: this.#clock });
        if (locked === undefined) return { result: "not_found" };
        const { leased, ...row } = locked;
        const record = toRecord(row);
        if (row.status === EventStatus.SUCCEEDED && !request.force)
          return { result: "refused", reason: "succeeded", record };
        if (leased) return { result: "refused", reason: "in_flight", record };
        const replayed = await q.replayEvent(tx, {
          sender,
          eventId,
          requestedBy: request.requestedBy,
          reason: request.reason,
          forced: request.force,
          fromStatus: row.status,
          now,
          clock: this.#clock,
        });
        if (replayed === undefined) throw new Error("row vanished inside its own transaction");
        return { result: "replayed", record: toRecord(replayed), fromStatus: row.status };
      }),
    );
    if (result.result === "replayed") this.#changed("replayed", result.record);
    return result;
  }

  async purgeFinished(request: PurgeRequest): Promise<number> {
    // Attempts and replays go by ON DELETE CASCADE; the count is of events only.
    return storage(() => q.purge(this.#sql, request.olderThan, request.batchSize));
  }

  async find(sender: string, eventId: string): Promise<EventRecord | undefined> {
    const row = await storage(() => q.selectEvent(this.#sql, sender, eventId));
    return row === undefined ? undefined : toRecord(row);
  }

  async findByEventId(eventId: string): Promise<EventRecord[]> {
    return (await storage(() => q.selectByEventId(this.#sql, eventId))).map(toRecord);
  }

  async listReplays(sender: string, eventId: string): Promise<ReplayRecord[]> {
    return (await storage(() => q.selectReplays(this.#sql, sender, eventId))).map(toReplay);
  }

  async listAttempts(sender: string, eventId: string): Promise<AttemptRecord[]> {
    return (await storage(() => q.selectAttempts(this.#sql, sender, eventId))).map(toAttempt);
  }

  async list(filter: ListFilter): Promise<EventRecord[]> {
    return (await storage(() => q.list(this.#sql, filter))).map(toRecord);
  }

  async page(filter: ListFilter & { before?: PageCursor }): Promise<EventRecord[]> {
    return (await storage(() => q.page(this.#sql, filter))).map(toRecord);
  }

  async search(term: string, limit: number): Promise<EventRecord[]> {
    const rows = searchRows(term, limit);
    if (rows === 0) return [];
    return (await storage(() => q.search(this.#sql, term, rows))).map(toRecord);
  }

  async countFinished(request: { olderThan: number }): Promise<number> {
    return storage(() => q.countFinished(this.#sql, request.olderThan));
  }

  async countByStatus(filter: StatusCountFilter): Promise<Record<EventStatus, number>> {
    return statusCounts(await storage(() => q.countByStatus(this.#sql, filter)));
  }

  async backlog(): Promise<Backlog> {
    const row = await storage(() => q.backlog(this.#sql));
    return {
      pending: row?.pending ?? 0,
      oldestPendingReceivedAt: row?.oldest ?? null,
      failedFinal: row?.failed_final ?? 0,
    };
  }

  /** The server answers and takes writes: not a standby left behind by a failover. */
  async ping(): Promise<void> {
    const writable = await storage(() => q.acceptsWrites(this.#sql));
    if (!writable) throw new StorageUnavailableError("PostgreSQL is in recovery (a standby): it takes no writes");
  }

  /** What the connections really run with, for diagnostics and tests. */
  async durability(): Promise<{ synchronousCommit: string }> {
    const rows = await storage(() => this.#sql<{ synchronous_commit: string }[]>`SHOW synchronous_commit`);
    return { synchronousCommit: rows[0]?.synchronous_commit ?? "unknown" };
  }

  readonly hitCounter: HitCounter = {
    hit: async (key, windowMs) => {
      const { hits, reset_in } = await storage(() => q.countHit(this.#sql, key, windowMs));
      return { hits, resetInMs: reset_in };
    },
  };

  /** Whether other instances' changes reach this one's watchers now. */
  get listening(): boolean {
    return this.#feed.listening;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#feed.close();
      // Callers close after their work has stopped; a connection to a vanished server must not hold shutdown.
      await this.#sql.end({ timeout: 2 });
    })();
    return this.#closing;
  }

  async importEvent(snapshot: EventSnapshot): Promise<"imported" | "present"> {
    const row = await storage(() => importSnapshot(this.#sql, snapshot));
    if (row === undefined) return "present";
    // This instance's watchers only: other instances' deliverers find it at their next poll.
    if (row.status === EventStatus.PROCESSING || row.status === EventStatus.FAILED_RETRYABLE) {
      this.#changed("recorded", toRecord(row));
    }
    return "imported";
  }
}
