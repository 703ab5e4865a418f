import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { EventStatus } from "../../domain/event-status.ts";
import type { BackendStatements } from "../backend.ts";
import type { AttemptReport, HitCounter, Lease, ReserveRequest, Settlement } from "../port.ts";
import { RegisterCore } from "../register-core.ts";
import { claimOf, type EventRow } from "../rows.ts";
import { finishedAttempt, replayRefusal } from "../rules.ts";
import { allSucceeded, WriteBatcher } from "../write-batcher.ts";
import { PostgresChangeFeed } from "./change-feed.ts";
import { DatabaseClock } from "./database-clock.ts";
import { importSnapshot } from "./import-events.ts";
import { DEFAULT_DEADLINES, type Deadlines, type LinkState, PostgresLink } from "./link.ts";
import { migrate } from "./migrate.ts";
import * as reads from "./read-statements.ts";
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
  /** How long opening a connection may take (its acquisition's deadline); each call has its own besides. */
  connectTimeoutSeconds?: number;
  /** Each call's deadline, and the pace of the tries to reach a lost database (link.ts). */
  deadlines?: Partial<Deadlines>;
  /** Told once per change: the database lost, and back (link.ts). */
  onLinkState?: (state: LinkState) => void;
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
  readonly #link: PostgresLink;
  readonly #feed: PostgresChangeFeed;
  readonly #clock: q.ClockSource;
  readonly #databaseClock: DatabaseClock;

  private constructor(
    link: PostgresLink,
    feed: PostgresChangeFeed,
    clock: q.ClockSource,
    databaseClock: DatabaseClock,
  ) {
    // Every batch goes to the server at once: the pool, not this side, bounds how many run together.
    // Each batch on the pool current when it goes: one dropped for an outage takes nothing more.
    const reserveAll = (batch: readonly ReserveRequest[]) =>
      reserveBatch(link.sql, clock, batch, databaseClock).then(allSucceeded);
    const settleAll = (batch: readonly q.SettleParams[]) => settleBatch(link.sql, batch).then(allSucceeded);
    const reservations = new WriteBatcher(reserveAll, 500, Infinity);
    const settles = new WriteBatcher(settleAll, 500, Infinity);
    const run = <T>(work: (sql: q.Sql) => Promise<T>, onLate?: (late: T) => void) => link.run(work, onLate);
    // A claim that waited past its deadline for a connection still runs, and commits leases its caller
    // never got: each would end as an unfinished attempt that never called 1C, and three such make the
    // crash-loop rule stop the event. They are given back at once, as a claim made ahead and not called
    // is; one that cannot be is left to its lease, as before.
    const giveBack = (rows: readonly EventRow[]) => {
      for (const row of rows) {
        const params: q.SettleParams = { lease: claimOf(row).lease, ...LATE_CLAIM, now: Date.now(), clock };
        run(() => settles.submit(params)).catch(() => {});
      }
    };
    const maintain = <T>(work: (sql: q.Db) => Promise<T>) => link.maintain(work);
    let closing: Promise<void> | undefined;
    const backend: BackendStatements = {
      queue: {
        reserve: (request) => run(() => reservations.submit(request)),
        claim: (request) => run((sql) => q.claimDue(sql, { ...request, clock }), giveBack),
        settle: async (lease: Lease, settlement: Settlement, report: AttemptReport, now: number) => {
          const params: q.SettleParams = { lease, settlement, now, clock, ...finishedAttempt(report) };
          return run(() => settles.submit(params));
        },
        bringForward: (now) => run((sql) => q.bringForward(sql, { now, clock })),
        // One short transaction: the row is locked while the refusal is decided on it.
        replay: (request) =>
          run((sql) =>
            sql.begin(async (tx) => {
              const locked = await q.selectEventForUpdate(tx, request.sender, request.eventId, { ...request, clock });
              if (locked === undefined) return { kind: "missing" } as const;
              const { row, now } = locked;
              const refusal = replayRefusal(row, request, now);
              if (refusal !== undefined) return { kind: "refused", reason: refusal, row } as const;
              const replayed = await q.replayEvent(tx, request, row, now);
              return { kind: "replayed", row: replayed, fromStatus: row.status } as const;
            }),
          ),
      },
      store: {
        find: (sender, eventId) =>
          run(async (sql) => observed(databaseClock, await q.selectEvent(sql, sender, eventId))),
        findByEventId: (eventId) => run((sql) => reads.selectByEventId(sql, eventId)),
        list: (filter) => run((sql) => reads.list(sql, filter)),
        page: (filter) => run((sql) => reads.page(sql, filter)),
        search: (term, limit) => run((sql) => reads.search(sql, term, limit)),
        countByStatus: (filter) => run((sql) => reads.countByStatus(sql, filter)),
        backlog: () => run((sql) => q.backlog(sql)),
      },
      audit: {
        attempts: (sender, eventId) => run((sql) => reads.selectAttempts(sql, sender, eventId)),
        replays: (sender, eventId) => run((sql) => reads.selectReplays(sql, sender, eventId)),
      },
      maintenance: {
        // Attempts and replays go by ON DELETE CASCADE; the count is of events only.
        purge: (request) => maintain((sql) => q.purge(sql, request)),
        countFinished: (bound) => maintain((sql) => q.countFinished(sql, bound)),
        importEvent: (rows) => maintain((sql) => importSnapshot(sql, rows)),
      },
      sessions: new PostgresSessionStore(link, clock),
      sources: new PostgresSourceLog(link),
      hitCounter: {
        hit: async (key, windowMs) => {
          const { hits, reset_in } = await run((sql) => q.countHit(sql, key, windowMs));
          return { hits, resetInMs: reset_in };
        },
      } satisfies HitCounter,
      feed,
      /**
       * A committed write of a large order's size (register_probe, migration 0007): it fails where a
       * reservation would, on a standby, a read-only server or a full disk. At once while the
       * database is lost (link.ts), within the request deadline otherwise.
       */
      ping: () => run((sql) => q.probeWrite(sql)),
      close: () => {
        closing ??= (async () => {
          await feed.close();
          // Callers close after their work has stopped; a connection to a vanished server must not hold shutdown.
          await link.close(2);
        })();
        return closing;
      },
    };
    super(backend);
    this.#link = link;
    this.#feed = feed;
    this.#clock = clock;
    this.#databaseClock = databaseClock;
  }

  /** Connects, applies missing migrations (under an advisory lock) and starts listening. */
  static async open(url: string, options: PostgresRegisterOptions): Promise<PostgresRegister> {
    const connectTimeoutSeconds = options.connectTimeoutSeconds ?? CONNECT_TIMEOUT_SECONDS;
    const deadlines = { ...DEFAULT_DEADLINES, ...options.deadlines };
    // The feed comes after the pool; until it is there, nothing listens that a link change could concern.
    let feed: PostgresChangeFeed | undefined;
    const link = new PostgresLink(
      (connections) => openPool(url, connections ?? options.poolMax, connectTimeoutSeconds, deadlines.requestMs),
      deadlines,
      (state) => {
        feed?.followLink(state);
        options.onLinkState?.(state);
      },
    );
    try {
      await storage(() => migrate(link.sql));
      const databaseClock = new DatabaseClock();
      databaseClock.observe(await link.run((sql) => q.databaseNow(sql)));
      const feedOptions = {
        connectTimeoutSeconds,
        checkEveryMs: deadlines.listenCheckEveryMs,
        checkMs: deadlines.requestMs,
      };
      feed = await storage(() =>
        PostgresChangeFeed.start(url, randomUUID(), feedOptions, (notices) =>
          link.run((sql) => q.publish(sql, notices)),
        ),
      );
      return new PostgresRegister(link, feed, options.clock ?? "database", databaseClock);
    } catch (error) {
      await link.close(0);
      throw error;
    }
  }

  /** What the connections really run with, for diagnostics and tests. */
  async durability(): Promise<{ synchronousCommit: string }> {
    const rows = await this.#link.run((sql) => sql<{ synchronous_commit: string }[]>`SHOW synchronous_commit`);
    return { synchronousCommit: rows[0]?.synchronous_commit ?? "unknown" };
  }

  /** Whether other instances' changes reach this one's watchers now (port.ts). */
  hearsOtherInstances(): boolean {
    return this.#feed.listening;
  }

  /** Whether the database is reachable now, as the calls last found it (link.ts). */
  get link(): LinkState {
    return this.#link.state;
  }

  /**
   * Now on the clock the records' times are on (port.ts, EventRegister.clockNow):
   * the database's, as last read with a row (database-clock.ts). On the
   * clock source "node" the callers' own clock stamped them: undefined.
   */
  clockNow(): number | undefined {
    return this.#clock === "database" ? this.#databaseClock.now() : undefined;
  }
}

/** `row`, its database time (statements.ts, Timed) noted on `clock` first. */
function observed<R extends { database_now: number }>(clock: DatabaseClock, row: R | undefined): R | undefined {
  if (row !== undefined) clock.observe(row.database_now);
  return row;
}

/** How a late claim is given back (port.ts, Release): its attempt row goes with it. */
const LATE_CLAIM = {
  settlement: { status: EventStatus.PROCESSING },
  ...finishedAttempt({
    startedAt: 0,
    durationMs: 0,
    outcome: "released",
    detail: "claimed after the deliverer had stopped waiting for the database",
  }),
} satisfies Partial<q.SettleParams>;

/** Opening a connection: local or in one data centre it takes milliseconds; a slower one is an outage. */
const CONNECT_TIMEOUT_SECONDS = 2;

/**
 * A pool. No reconnect backoff of the driver's (it grows to 20 s and a later
 * success does not reset it): while the database is lost, no call reaches
 * the pool and the link's probe paces the tries (link.ts).
 */
function openPool(url: string, poolMax: number, connectTimeoutSeconds: number, statementTimeoutMs: number): q.Sql {
  return postgres(url, {
    max: poolMax,
    connect_timeout: connectTimeoutSeconds,
    idle_timeout: 60,
    backoff: () => 0,
    onnotice: () => {},
    // No array-type query on each new connection: its failure would be unhandled (array-literal.ts).
    fetch_types: false,
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
      ...SESSION_BOUNDS,
      // An overrun call's statement ends on the server too (link.ts, PostgresLink); maintenance raises it.
      statement_timeout: Math.trunc(statementTimeoutMs),
    },
  });
}

/**
 * What no statement of ours may wait for, on the server's side: the link's
 * deadline answers the caller, but the statement would go on, holding its
 * pool connection, and commit later. Behind a row lock held by an instance
 * that froze before its COMMIT, every retry of that event took one more
 * connection until the pool was spent and the instance answered 503 to
 * everything, for as long as the lock stood (TCP keepalive: hours). So a
 * lock wait ends after a few seconds, and a transaction left idle (its
 * instance frozen or gone) is ended by the server, its locks with it.
 * Each statement is bounded besides, by the request deadline
 * (statement_timeout, set in openPool; link.ts says why): the lock wait's
 * bound remains for maintenance's statements, which may run longer.
 */
const SESSION_BOUNDS = {
  lock_timeout: 5000,
  idle_in_transaction_session_timeout: 30_000,
} as const;

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
  databaseClock: DatabaseClock,
): Promise<ReserveResultRow[]> {
  const inserted = await q.insertEvents(sql, batch, clock);
  observed(databaseClock, inserted[0]);
  const createdAt = new Map(inserted.map(({ ord, ...row }) => [ord - 1, row]));
  const others = batch.filter((_, index) => !createdAt.has(index));
  const existing = others.length === 0 ? [] : await q.selectEventsByKeys(sql, others);
  observed(databaseClock, existing[0]);
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
