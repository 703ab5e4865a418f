import postgres from "postgres";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import type { ChangeFeed } from "../backend.ts";
import type { EventChange, RegisterChange } from "../port.ts";
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
 */
export class PostgresChangeFeed implements ChangeFeed {
  readonly #origin: string;
  readonly #listeners = new Set<Listener>();
  readonly #connection: postgres.Sql;
  readonly #publish: Publish;
  #outbox: string[] = [];
  #publishing: Promise<void> | undefined;
  #retryMs = RETRY_MIN_MS;
  #retry: NodeJS.Timeout | undefined;
  #listening = false;
  #closed = false;

  private constructor(url: string, origin: string, connectTimeoutSeconds: number, publish: Publish) {
    this.#origin = origin;
    this.#publish = publish;
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
      connect_timeout: connectTimeoutSeconds,
      onnotice: () => {},
      connection: { application_name: "onec-order-gateway listener" },
      onclose: () => this.#lost(),
      onnotify: (channel, payload) => {
        if (channel === CHANGES_CHANNEL) this.#received(payload);
      },
    };
    this.#connection = postgres(url, options);
  }

  /** Resolves once listening, so that nothing committed after open() is missed. */
  static async start(
    url: string,
    origin: string,
    connectTimeoutSeconds: number,
    publish: Publish,
  ): Promise<PostgresChangeFeed> {
    const feed = new PostgresChangeFeed(url, origin, connectTimeoutSeconds, publish);
    try {
      await feed.#listen();
    } catch (error) {
      await feed.close();
      throw error;
    }
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
    await this.#connection.end({ timeout: 1 });
  }

  async #listen(): Promise<void> {
    await this.#connection.unsafe(`LISTEN "${CHANGES_CHANNEL}"`);
    this.#listening = true;
    this.#retryMs = RETRY_MIN_MS;
  }

  #lost(): void {
    this.#listening = false;
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#closed) return;
      // A failed LISTEN closes its connection again, which schedules the next try.
      this.#listen().catch(() => {
        this.#retryMs = Math.min(RETRY_MAX_MS, this.#retryMs * 2);
        this.#lost();
      });
    }, this.#retryMs);
    this.#retry.unref();
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
