import postgres from "postgres";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import { withinDeadline } from "../../util/deadline.ts";
import type { ChangeFeed } from "../backend.ts";
import type { EventChange, RegisterChange } from "../port.ts";
import type { LinkState } from "./link.ts";
import { CHANGES_CHANNEL, type ChangeNotice } from "./statements.ts";

type Listener = (change: RegisterChange) => void;
/** Sends notices to every instance (statements.ts, publish), after the commits they tell of. */
type Publish = (notices: readonly string[]) => Promise<void>;

/** Notices per NOTIFY statement: far below what one statement can carry, and a bounded batch. */
const PUBLISH_BATCH = 500;

const EVENT_KINDS: readonly EventChange["kind"][] = ["recorded", "replayed", "settled"];
const RETRY_MIN_MS = 250;
/** Back within about a second of the server: remote changes missed meanwhile are found by polling. */
const RETRY_MAX_MS = 1000;

type CheckOutcome = "answered" | "refused" | "silent";

/** How the LISTEN connection is opened and watched. */
export interface ChangeFeedOptions {
  connectTimeoutSeconds: number;
  /** The pause between two checks that the connection still answers (a `SELECT 1` on it). */
  checkEveryMs: number;
  /** How long such a check may take before the connection counts as dead. */
  checkMs: number;
}

/**
 * `watch()` across instances. This register's own commits reach its watchers
 * directly, right after the commit (as SQLite's do), and are published to the
 * others after it: the changes of one turn of the event loop in one NOTIFY
 * statement of their own. (NOTIFY inside the write itself would hold a
 * database-wide lock through that write's commit and flush, one commit at a
 * time for every instance.) Every other instance's changes arrive through
 * LISTEN on one dedicated connection, marked remote. Notifications this
 * instance sent come back over LISTEN too and are dropped by their origin, so
 * each change is told once. A notice lost to a crash between commit and
 * publish, or sent while the LISTEN connection was being re-established, is
 * missed: the waiters' and the deliverers' polling finds that change.
 *
 * A connection the network dropped in silence (no RST: a partition, a
 * firewall that forgot an idle connection) never closes by itself: TCP
 * keepalive notices after minutes. So the connection is dropped and opened
 * anew when the link finds the database lost (followLink), and when a check
 * on it goes unanswered (checkEveryMs): notifications resume within about a
 * second of the network's return, not at keepalive's pace.
 */
export class PostgresChangeFeed implements ChangeFeed {
  readonly #url: string;
  readonly #origin: string;
  readonly #options: ChangeFeedOptions;
  readonly #listeners = new Set<Listener>();
  readonly #publish: Publish;
  /** The current connection; one dropped for another is ended and forgotten (reconnect). */
  #connection: postgres.Sql;
  #outbox: string[] = [];
  #publishing: Promise<void> | undefined;
  #retryMs = RETRY_MIN_MS;
  #retry: NodeJS.Timeout | undefined;
  #checks: NodeJS.Timeout | undefined;
  #checking = false;
  #listening = false;
  #closed = false;

  private constructor(url: string, origin: string, options: ChangeFeedOptions, publish: Publish) {
    this.#url = url;
    this.#origin = origin;
    this.#options = options;
    this.#publish = publish;
    this.#connection = this.#open();
  }

  /** Resolves once listening, so that nothing committed after open() is missed. */
  static async start(
    url: string,
    origin: string,
    options: ChangeFeedOptions,
    publish: Publish,
  ): Promise<PostgresChangeFeed> {
    const feed = new PostgresChangeFeed(url, origin, options, publish);
    try {
      await feed.#listen(feed.#connection);
    } catch (error) {
      await feed.close();
      throw error;
    }
    feed.#checks = setInterval(() => void feed.#check(), options.checkEveryMs);
    // Watching the connection alone must not keep a process alive.
    feed.#checks.unref();
    return feed;
  }

  get origin(): string {
    return this.#origin;
  }

  /** Whether the LISTEN connection is up now (for diagnostics and tests). */
  get listening(): boolean {
    return this.#listening;
  }

  watch(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A change this instance committed: told here at once, and to the other instances next. */
  local(change: RegisterChange): void {
    this.#tell(change);
    // The record stays here: other instances read what they need, and a NOTIFY payload is small.
    this.#outbox.push(JSON.stringify({ ...change, record: undefined, origin: this.#origin }));
    this.#publishing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#flush());
  }

  /**
   * What the link (link.ts) found: the database lost means this connection
   * may be dead in silence too, so it is replaced; the database back, with
   * no LISTEN up, means a try may be stuck on a connection opened during the
   * outage, so it is replaced as well and listening resumes at once.
   */
  followLink(state: LinkState): void {
    if (state.state === "lost" || !this.#listening) this.reconnect();
  }

  /** Drops the LISTEN connection, whatever its state, and listens on a new one now. */
  reconnect(): void {
    if (this.#closed) return;
    const dropped = this.#connection;
    this.#connection = this.#open();
    this.#listening = false;
    // Not a graceful end: a dead path would hold it until TCP gives up. Its late close is ignored (#open).
    void dropped.end({ timeout: 0 }).catch(() => {});
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#retryMs = RETRY_MIN_MS;
    this.#tryListen();
  }

  /** Sends what the outbox holds, in batches, until it is empty; a failed send is left to polling. */
  async #flush(): Promise<void> {
    while (this.#outbox.length > 0) {
      const batch = this.#outbox.splice(0, PUBLISH_BATCH);
      await this.#publish(batch).catch(() => {});
    }
    this.#publishing = undefined;
  }

  async close(): Promise<void> {
    await this.#publishing;
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#checks);
    await this.#connection.end({ timeout: 1 });
  }

  /** One connection; its close and its notifications count only while it is the current one. */
  #open(): postgres.Sql {
    // `onnotify` is the driver's hook for NotificationResponse; its typings only expose it through listen(),
    // whose own reconnect gives up after one failed try.
    const options: Partial<postgres.Options<Record<string, never>>> & {
      onnotify: (channel: string, payload: string) => void;
    } = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      // Its own retries pace the reconnects: the driver's backoff grows to 20 s and is never reset.
      backoff: () => 0,
      fetch_types: false,
      connect_timeout: this.#options.connectTimeoutSeconds,
      onnotice: () => {},
      connection: { application_name: "onec-order-gateway listener" },
      onclose: () => {
        if (connection === this.#connection) this.#lost();
      },
      onnotify: (channel, payload) => {
        if (channel === CHANGES_CHANNEL && connection === this.#connection) this.#received(payload);
      },
    };
    const connection = postgres(this.#url, options);
    return connection;
  }

  async #listen(connection: postgres.Sql): Promise<void> {
    await connection.unsafe(`LISTEN "${CHANGES_CHANNEL}"`);
    // Replaced meanwhile: the new connection's own LISTEN says when it listens.
    if (connection !== this.#connection) return;
    this.#listening = true;
    this.#retryMs = RETRY_MIN_MS;
  }

  #tryListen(): void {
    const connection = this.#connection;
    // A failed LISTEN closes its connection again, which schedules the next try.
    this.#listen(connection).catch(() => {
      if (connection !== this.#connection) return;
      this.#retryMs = Math.min(RETRY_MAX_MS, this.#retryMs * 2);
      this.#lost();
    });
  }

  #lost(): void {
    this.#listening = false;
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#closed) this.#tryListen();
    }, this.#retryMs);
    this.#retry.unref();
  }

  /**
   * While listening: a `SELECT 1` on the connection. Unanswered within
   * checkMs, the connection is taken for dead (a silent partition, the path
   * dropped by a firewall) and replaced. A refused check needs nothing: the
   * connection's close has scheduled the next LISTEN already.
   */
  async #check(): Promise<void> {
    if (!this.#listening || this.#checking || this.#closed) return;
    this.#checking = true;
    const connection = this.#connection;
    try {
      const answer = connection`SELECT 1`.then(
        () => "answered" as const,
        () => "refused" as const,
      );
      const outcome = await withinDeadline<CheckOutcome>(answer, this.#options.checkMs, "silent");
      if (outcome === "silent" && connection === this.#connection && this.#listening) this.reconnect();
    } finally {
      this.#checking = false;
    }
  }

  #received(payload: string): void {
    const notice = parseNotice(payload);
    if (notice === undefined || notice.origin === this.#origin) return;
    const { origin: _, ...change } = notice;
    this.#tell(change.kind === "rescheduled" ? change : { ...change, remote: true });
  }

  #tell(change: RegisterChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}

/** Only well-formed notices: anything else on the channel is not ours to act on. */
export function parseNotice(payload: string): ChangeNotice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { kind, sender, eventId, status, count, origin } = value as Record<string, unknown>;
  if (typeof origin !== "string") return undefined;
  if (kind === "rescheduled") {
    return Number.isSafeInteger(count) && (count as number) > 0 ? { kind, count: count as number, origin } : undefined;
  }
  if (!EVENT_KINDS.includes(kind as EventChange["kind"])) return undefined;
  if (!ALL_STATUSES.includes(status as EventStatus)) return undefined;
  if (typeof sender !== "string" || typeof eventId !== "string") return undefined;
  return { kind: kind as EventChange["kind"], sender, eventId, status: status as EventStatus, origin };
}
