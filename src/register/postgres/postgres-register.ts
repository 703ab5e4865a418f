import { randomUUID } from "node:crypto";
import postgres from "postgres";
import type { BackendStatements } from "../backend.ts";
import {
  type AttemptReport,
  type HitCounter,
  type Lease,
  type ReserveRequest,
  type Settlement,
  StorageUnavailableError,
} from "../port.ts";
import { RegisterCore } from "../register-core.ts";
import type { EventRow } from "../rows.ts";
import { finishedAttempt, replayRefusal } from "../rules.ts";
import { allSucceeded, WriteBatcher } from "../write-batcher.ts";
import { PostgresChangeFeed } from "./change-feed.ts";
import { importSnapshot } from "./import-events.ts";
import { migrate } from "./migrate.ts";
import { PostgresSessionStore } from "./session-store.ts";
import { PostgresSourceLog } from "./source-store.ts";
import * as q from "./statements.ts";
import { storage } from "./storage-errors.ts";

/** One string per (sender, event_id): for maps, and for one order all batches agree on. */
function eventKey(sender: string, eventId: string): string {
  return `${sender}\u0000${eventId}`;
}

function compareLeases(a: q.SettleParams, b: q.SettleParams): number {
  const left = eventKey(a.lease.sender, a.lease.eventId);
  const right = eventKey(b.lease.sender, b.lease.eventId);
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
export class PostgresRegister extends RegisterCore {
  readonly #sql: q.Sql;
  readonly #feed: PostgresChangeFeed;

  private constructor(sql: q.Sql, feed: PostgresChangeFeed, clock: q.ClockSource) {
    // Every batch goes to the server at once: the pool, not this side, bounds how many run together.
    const reserveAll = (batch: readonly ReserveRequest[]) => reserveBatch(sql, clock, batch).then(allSucceeded);
    const settleAll = (batch: readonly q.SettleParams[]) => settleBatch(sql, batch).then(allSucceeded);
    const reservations = new WriteBatcher(reserveAll, 500, Infinity);
    const settles = new WriteBatcher(settleAll, 500, Infinity);
    let closing: Promise<void> | undefined;
    const backend: BackendStatements = {
      queue: {
        reserve: (request) => storage(() => reservations.submit(request)),
        claim: (request) => storage(() => q.claimDue(sql, { ...request, clock })),
        settle: async (lease: Lease, settlement: Settlement, report: AttemptReport, now: number) => {
          const params: q.SettleParams = { lease, settlement, now, clock, ...finishedAttempt(report) };
          return storage(() => settles.submit(params));
        },
        bringForward: (now) => storage(() => q.bringForward(sql, { now, clock })),
        // One short transaction: the row is locked while the refusal is decided on it.
        replay: (request) =>
          storage(() =>
            sql.begin(async (tx) => {
              const locked = await q.selectEventForUpdate(tx, request.sender, request.eventId, { ...request, clock });
              if (locked === undefined) return { kind: "missing" } as const;
              const { row, now } = locked;
              const refusal = replayRefusal(row, request.force, now);
              if (refusal !== undefined) return { kind: "refused", reason: refusal, row } as const;
              const replayed = await q.replayEvent(tx, request, row, now);
              return { kind: "replayed", row: replayed, fromStatus: row.status } as const;
            }),
          ),
      },
      store: {
        find: (sender, eventId) => storage(() => q.selectEvent(sql, sender, eventId)),
        findByEventId: (eventId) => storage(() => q.selectByEventId(sql, eventId)),
        list: (filter) => storage(() => q.list(sql, filter)),
        page: (filter) => storage(() => q.page(sql, filter)),
        search: (term, limit) => storage(() => q.search(sql, term, limit)),
        countByStatus: (filter) => storage(() => q.countByStatus(sql, filter)),
        backlog: () => storage(() => q.backlog(sql)),
      },
      audit: {
        attempts: (sender, eventId) => storage(() => q.selectAttempts(sql, sender, eventId)),
        replays: (sender, eventId) => storage(() => q.selectReplays(sql, sender, eventId)),
      },
      maintenance: {
        // Attempts and replays go by ON DELETE CASCADE; the count is of events only.
        purge: (request) => storage(() => q.purge(sql, request.olderThan, request.batchSize)),
        countFinished: (olderThan) => storage(() => q.countFinished(sql, olderThan)),
        importEvent: (rows) => storage(() => importSnapshot(sql, rows)),
      },
      sessions: new PostgresSessionStore(sql, clock),
      sources: new PostgresSourceLog(sql),
      hitCounter: {
        hit: async (key, windowMs) => {
          const { hits, reset_in } = await storage(() => q.countHit(sql, key, windowMs));
          return { hits, resetInMs: reset_in };
        },
      } satisfies HitCounter,
      feed,
      /** The server answers and takes writes: not a standby left behind by a failover. */
      ping: async () => {
        const writable = await storage(() => q.acceptsWrites(sql));
        if (!writable) throw new StorageUnavailableError("PostgreSQL is in recovery (a standby): it takes no writes");
      },
      close: () => {
        closing ??= (async () => {
          await feed.close();
          // Callers close after their work has stopped; a connection to a vanished server must not hold shutdown.
          await sql.end({ timeout: 2 });
        })();
        return closing;
      },
    };
    super(backend);
    this.#sql = sql;
    this.#feed = feed;
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
        PostgresChangeFeed.start(url, randomUUID(), connectTimeoutSeconds, (notices) => q.publish(sql, notices)),
      );
      return new PostgresRegister(sql, feed, options.clock ?? "database");
    } catch (error) {
      await sql.end({ timeout: 0 });
      throw error;
    }
  }

  /** What the connections really run with, for diagnostics and tests. */
  async durability(): Promise<{ synchronousCommit: string }> {
    const rows = await storage(() => this.#sql<{ synchronous_commit: string }[]>`SHOW synchronous_commit`);
    return { synchronousCommit: rows[0]?.synchronous_commit ?? "unknown" };
  }

  /** Whether other instances' changes reach this one's watchers now. */
  get listening(): boolean {
    return this.#feed.listening;
  }
}

type ReserveResultRow = { created: boolean; row: EventRow };

/**
 * The reservations of one event-loop turn: one INSERT for all, then one
 * SELECT for the keys that were there already. Read committed: a
 * concurrent insert of the same key makes ours wait for its commit and do
 * nothing; the SELECT, a new statement, then sees that row.
 */
async function reserveBatch(
  sql: q.Sql,
  clock: q.ClockSource,
  batch: readonly ReserveRequest[],
): Promise<ReserveResultRow[]> {
  const inserted = await q.insertEvents(sql, batch, clock);
  const createdAt = new Map(inserted.map(({ ord, ...row }) => [ord - 1, row]));
  const others = batch.filter((_, index) => !createdAt.has(index));
  const existing = others.length === 0 ? [] : await q.selectEventsByKeys(sql, others);
  const existingByKey = new Map(existing.map((row) => [eventKey(row.sender, row.event_id), row]));
  return Promise.all(
    batch.map(async (request, index): Promise<ReserveResultRow> => {
      const created = createdAt.get(index);
      if (created !== undefined) return { created: true, row: created };
      const row = existingByKey.get(eventKey(request.sender, request.eventId));
      if (row !== undefined) return { created: false, row };
      return reserveAlone(sql, clock, request);
    }),
  );
}

/** Purged between the batch's two statements: the key is free again, so insert once more, alone. */
async function reserveAlone(sql: q.Sql, clock: q.ClockSource, request: ReserveRequest): Promise<ReserveResultRow> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const [inserted] = await q.insertEvents(sql, [request], clock);
    if (inserted !== undefined) return { created: true, row: inserted };
    const existing = await q.selectEvent(sql, request.sender, request.eventId);
    if (existing !== undefined) return { created: false, row: existing };
  }
  throw new Error(`event ${request.eventId} keeps vanishing between insert and select`);
}

/**
 * The outcomes of one event-loop turn: one transaction with its statements
 * pipelined, so one round trip and one commit (one WAL flush) serve them
 * all. Each stays fenced by its own lease token. In key order, so two
 * workers' batches never take the same rows in opposite orders.
 */
async function settleBatch(sql: q.Sql, batch: readonly q.SettleParams[]): Promise<(EventRow | undefined)[]> {
  if (batch.length === 1) {
    const [params] = batch as [q.SettleParams];
    return [await q.settleEvent(sql, params)];
  }
  const sorted = batch.map((params, index) => ({ params, index })).sort((a, b) => compareLeases(a.params, b.params));
  const rows = await sql.begin((tx) => Promise.all(sorted.map(({ params }) => q.settleEvent(tx, params))));
  // No row: the lease was lost.
  const done: (EventRow | undefined)[] = [];
  sorted.forEach(({ index }, position) => {
    done[index] = rows[position];
  });
  return done;
}
