import { StorageUnavailableError } from "../port.ts";
import type { Db, Sql } from "./statements.ts";
import { asStorageError, connectionLost } from "./storage-errors.ts";

/**
 * How long the register waits on PostgreSQL. Connection acquisition has the
 * driver's connect_timeout; every call has its own deadline on top, which
 * covers waiting for a connection, the statements and their answers.
 *
 * The deadline counts the wait for a pool connection on purpose: the caller
 * is promised an answer (a 503 at worst) within it, and a caller who cannot
 * even get a connection in time is one the register cannot serve now. The
 * server's bound on each statement (statement_timeout, see PostgresLink)
 * counts from the statement's own start: a statement that made its call
 * overrun ends about when the caller is answered; one still queued in the
 * pool at its call's deadline runs later, bounded the same way.
 */
export interface Deadlines {
  /** A call that answers a request or is a worker's step (reserve, claim, settle, reads, sessions). */
  requestMs: number;
  /** Maintenance: purge batches, counts of finished events, imports. */
  maintenanceMs: number;
  /** While the database is lost: the pause between two tries to reach it. */
  probeEveryMs: number;
  /** One such try: a try stuck on a half-made connection must not hold back the next. */
  probeMs: number;
  /** The pause between two checks that the LISTEN connection still answers (change-feed.ts); each has requestMs. */
  listenCheckEveryMs: number;
}

/** Measured in docs/operations.md: a lost database answers 503 in milliseconds, a slow one within requestMs. */
export const DEFAULT_DEADLINES: Deadlines = {
  requestMs: 1000,
  maintenanceMs: 30_000,
  probeEveryMs: 100,
  probeMs: 500,
  listenCheckEveryMs: 5000,
};

/** What the link tells whoever watches it (tests, diagnostics): each change once. */
export type LinkState = { state: "up" } | { state: "lost"; since: number; cause: string };

/** The work of one call, on the pool current when it starts. */
export type Work<T> = (sql: Sql) => Promise<T>;

/** Maintenance's work: inside a transaction of its own, which carries its longer statement bound. */
export type MaintenanceWork<T> = (db: Db) => Promise<T>;

/**
 * The register's way to PostgreSQL: one pool, and the rule that no call
 * waits on a database that is gone. postgres.js queues a query while all its
 * connections are (re)connecting, and its reconnect backoff grows to 20 s
 * and is never reset by a later success; so, once, requests waited 7–17 s
 * and ran on stale sockets after the server was back.
 *
 * So: a call that meets a lost connection (refused, reset, the server
 * shutting down) marks the database lost. From then on every call fails at
 * once with StorageUnavailableError, the pool is dropped, with every query
 * still queued in it (none of them will run later on a dead socket, and
 * their callers have had their answer), and a fresh pool is tried every
 * probeEveryMs with one `SELECT 1`. Its first answer marks the database up
 * again, on a connection already open for the next call. A call that
 * overruns its deadline fails the same way, and has the database checked.
 *
 * An overrun call's statement ends on the server too, by the server's own
 * clock: every pooled session runs with statement_timeout = requestMs (the
 * pool's `open` sets it), which ends that statement and no other, needs no
 * second connection, costs no round trip, and still works when the client
 * can no longer reach the server. (A cancel sent from here, by
 * pg_cancel_backend or the protocol's CancelRequest, names a backend, not a
 * statement: postgres.js pipelines other calls' statements on the same
 * connection, and a cancel that crossed the overrun one's completion would
 * end the next caller's.) Maintenance raises the bound for its own
 * transaction (maintain).
 */
export class PostgresLink {
  readonly #open: (connections?: number) => Sql;
  readonly #deadlines: Deadlines;
  readonly #onState: (state: LinkState) => void;
  #sql: Sql;
  #lost: { since: number; cause: string } | undefined;
  #checking: Promise<void> | undefined;
  #closed = false;

  /** `open` makes a pool: of the register's size, or of `connections` (the check's one). */
  constructor(
    open: (connections?: number) => Sql,
    deadlines: Deadlines,
    onState: (state: LinkState) => void = () => {},
  ) {
    this.#open = open;
    this.#deadlines = deadlines;
    this.#onState = onState;
    this.#sql = open();
  }

  /** The pool now: for work that must not be bounded (migrations at open) and for diagnostics. */
  get sql(): Sql {
    return this.#sql;
  }

  get state(): LinkState {
    return this.#lost === undefined ? { state: "up" } : { state: "lost", ...this.#lost };
  }

  /**
   * Runs `work` under the request deadline; "cannot record now" comes out as StorageUnavailableError.
   * `onLate` gets what the work came to after its caller was answered with that error, if it succeeded.
   */
  run<T>(work: Work<T>, onLate?: (late: T) => void): Promise<T> {
    return this.within(work, this.#deadlines.requestMs, onLate);
  }

  /**
   * Runs maintenance's `work` under its longer deadline, in a transaction
   * whose statements may run as long: SET LOCAL ends with the transaction,
   * so the connection goes back to the pool with the request bound again,
   * whatever became of the work.
   */
  maintain<T>(work: MaintenanceWork<T>): Promise<T> {
    const ms = this.#deadlines.maintenanceMs;
    return this.within(
      (sql) =>
        sql.begin(async (tx) => {
          await tx.unsafe(`SET LOCAL statement_timeout = ${Math.trunc(ms)}`);
          return work(tx);
        }) as Promise<T>,
      ms,
    );
  }

  /**
   * Runs `work` with a deadline of its own. Its statements keep the pool's
   * bound (requestMs each, on the server): a longer deadline needs its own
   * transaction, as maintain's.
   *
   * A call that waited for a pool connection past its deadline still runs
   * once it has one, and may commit: a write whose caller must not keep its
   * effect (a claim's leases) passes `onLate`, which gets that result.
   */
  async within<T>(work: Work<T>, deadlineMs: number, onLate?: (late: T) => void): Promise<T> {
    if (this.#lost !== undefined) throw this.#unavailable();
    const sql = this.#sql;
    let timer: NodeJS.Timeout | undefined;
    let overran = false;
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        overran = true;
        reject(new StorageUnavailableError(`PostgreSQL: no answer within ${deadlineMs} ms`));
        // Slow or gone: a statement of its own tells which.
        this.#check(sql);
      }, deadlineMs);
    });
    try {
      const working = work(sql);
      if (onLate !== undefined)
        working.then(
          (late) => {
            if (overran) onLate(late);
          },
          () => {},
        );
      // Answered by the deadline, the caller has its answer: whatever the work comes to later is nobody's
      // but onLate's, and the server ends its statement within requestMs of that statement's start
      // (statement_timeout).
      return await Promise.race([working, overrun]);
    } catch (error) {
      if (sql === this.#sql && connectionLost(error)) this.#lose(sql, describe(error));
      throw asStorageError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(timeoutSeconds: number): Promise<void> {
    this.#closed = true;
    await this.#checking;
    await this.#sql.end({ timeout: timeoutSeconds });
  }

  #unavailable(): StorageUnavailableError {
    return new StorageUnavailableError(
      `PostgreSQL unreachable since ${new Date(this.#lost?.since ?? 0).toISOString()}: ${this.#lost?.cause}`,
    );
  }

  /**
   * After an overrun: one `SELECT 1` on a connection of its own, not queued
   * behind the pool's slow statements; failing it within the deadline means lost.
   */
  #check(sql: Sql): void {
    if (this.#checking !== undefined || this.#lost !== undefined || this.#closed) return;
    const alone = this.#open(1);
    const checking = answers(alone, this.#deadlines.requestMs)
      .then((cause) => {
        if (cause !== undefined && sql === this.#sql) this.#lose(sql, cause);
      })
      .finally(() => {
        // The probe #lose started has taken its place.
        if (this.#checking === checking) this.#checking = undefined;
        void alone.end({ timeout: 0 }).catch(() => {});
      });
    this.#checking = checking;
  }

  #lose(sql: Sql, cause: string): void {
    if (this.#lost !== undefined || this.#closed) return;
    this.#lost = { since: Date.now(), cause };
    this.#sql = this.#open();
    // Its queued queries are rejected now, its connections closed: nothing of it runs after the outage.
    void sql.end({ timeout: 0 }).catch(() => {});
    this.#onState(this.state);
    const probing = this.#probe().finally(() => {
      if (this.#checking === probing) this.#checking = undefined;
    });
    this.#checking = probing;
  }

  /** One try at a time, probeEveryMs apart, until the server answers or the register closes. */
  async #probe(): Promise<void> {
    while (!this.#closed) {
      await new Promise((resolve) => setTimeout(resolve, this.#deadlines.probeEveryMs).unref());
      if (this.#closed) return;
      const cause = await answers(this.#sql, this.#deadlines.probeMs);
      if (cause === undefined) {
        this.#lost = undefined;
        this.#onState(this.state);
        return;
      }
      if (this.#lost !== undefined) this.#lost.cause = cause;
    }
  }
}

/** Undefined when the pool answers `SELECT 1` within `deadlineMs`; why not otherwise. */
async function answers(sql: Sql, deadlineMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${deadlineMs} ms`), deadlineMs);
  });
  const query = sql`SELECT 1`.then(
    () => undefined,
    (error: unknown) => describe(error),
  );
  try {
    return await Promise.race([query, overrun]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
