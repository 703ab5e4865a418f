import { StorageUnavailableError } from "../port.ts";
import type { Sql } from "./statements.ts";
import { asStorageError, connectionLost } from "./storage-errors.ts";

/**
 * How long the register waits on PostgreSQL. Connection acquisition has the
 * driver's connect_timeout; every call has its own deadline on top, which
 * covers waiting for a connection, the statements and their answers.
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
}

/** Measured in docs/operations.md: a lost database answers 503 in milliseconds, a slow one within requestMs. */
export const DEFAULT_DEADLINES: Deadlines = { requestMs: 1000, maintenanceMs: 30_000, probeEveryMs: 100, probeMs: 500 };

/** Which deadline a call runs under. */
export type CallKind = "request" | "maintenance";

/** What the link tells whoever watches it (tests, diagnostics): each change once. */
export type LinkState = { state: "up" } | { state: "lost"; since: number; cause: string };

/** The work of one call, on the pool current when it starts. */
export type Work<T> = (sql: Sql) => Promise<T>;

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

  /** Runs `work` under the deadline of its kind; "cannot record now" comes out as StorageUnavailableError. */
  run<T>(work: Work<T>, kind: CallKind = "request"): Promise<T> {
    return this.within(work, kind === "request" ? this.#deadlines.requestMs : this.#deadlines.maintenanceMs);
  }

  /** Runs `work` with a deadline of its own (the readiness probe's ping). */
  async within<T>(work: Work<T>, deadlineMs: number): Promise<T> {
    if (this.#lost !== undefined) throw this.#unavailable();
    const sql = this.#sql;
    let timer: NodeJS.Timeout | undefined;
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new StorageUnavailableError(`PostgreSQL: no answer within ${deadlineMs} ms`));
        // Slow or gone: a statement of its own tells which.
        this.#check(sql);
      }, deadlineMs);
    });
    try {
      // Answered by the deadline, the caller has its answer: whatever the work comes to later is nobody's.
      return await Promise.race([work(sql), overrun]);
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
