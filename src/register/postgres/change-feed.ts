import postgres from "postgres";
import { ALL_STATUSES, type EventStatus } from "../event-status.ts";
import type { EventChange, RegisterChange } from "../port.ts";
import { CHANGES_CHANNEL, type ChangeNotice } from "./statements.ts";

type Listener = (change: RegisterChange) => void;

const EVENT_KINDS: readonly EventChange["kind"][] = ["recorded", "replayed", "settled"];
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

/**
 * `watch()` across instances. This register's own commits reach its watchers
 * directly, right after the commit (as SQLite's do); every other instance's
 * reach them through LISTEN on one dedicated connection. Notifications this
 * instance sent come back over LISTEN too and are dropped by their origin, so
 * each change is told once. A lost connection is re-established with backoff;
 * what was notified meanwhile is missed, and the waiters' polling finds it.
 */
export class ChangeFeed {
  readonly #origin: string;
  readonly #listeners = new Set<Listener>();
  readonly #connection: postgres.Sql;
  #retryMs = RETRY_MIN_MS;
  #retry: NodeJS.Timeout | undefined;
  #listening = false;
  #closed = false;

  private constructor(url: string, origin: string, connectTimeoutSeconds: number) {
    this.#origin = origin;
    // `onnotify` is the driver's hook for NotificationResponse; its typings only expose it through listen(),
    // whose own reconnect gives up after one failed try.
    const options: Partial<postgres.Options<Record<string, never>>> & {
      onnotify: (channel: string, payload: string) => void;
    } = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
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
  static async start(url: string, origin: string, connectTimeoutSeconds: number): Promise<ChangeFeed> {
    const feed = new ChangeFeed(url, origin, connectTimeoutSeconds);
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

  /** A change this instance committed: told at once, without the round trip. */
  local(change: RegisterChange): void {
    this.#tell(change);
  }

  async close(): Promise<void> {
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
    this.#tell(change);
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
