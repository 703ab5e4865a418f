import { EventEmitter } from "node:events";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "pino";
import type { EventRegister, PurgeRequest } from "../register/port.ts";

/** Small enough that one batch holds SQLite's write lock for tens of milliseconds (150–200 with 200 KB bodies), on the writer thread. */
export const DEFAULT_PURGE_BATCH_SIZE = 500;

/** The first run waits this long (or one interval, if shorter), so it does not compete with start-up. */
const FIRST_RUN_DELAY_MS = 10_000;

/**
 * Purges batch after batch until one comes back short. Each batch is its own
 * transaction, and the event loop gets a turn between them: requests in this
 * process and writers in others are never kept waiting behind a big backlog.
 * `keepGoing` lets a shutdown end the loop at the next batch boundary.
 */
export function purgeInBatches(
  register: EventRegister,
  request: PurgeRequest,
  keepGoing: () => boolean = () => true,
): Promise<number> {
  return inBatches((batch) => register.purgeFinished(batch), request, keepGoing);
}

/** The platforms' ignored deliveries, the same way (accepted and mapped ones go with their events; unmapped ones wait for support). */
export function purgeSourcesInBatches(
  register: EventRegister,
  request: PurgeRequest,
  keepGoing: () => boolean = () => true,
): Promise<number> {
  return inBatches((batch) => register.sources.purge(batch), request, keepGoing);
}

async function inBatches(
  purgeBatch: (request: PurgeRequest) => Promise<number>,
  request: PurgeRequest,
  keepGoing: () => boolean,
): Promise<number> {
  let total = 0;
  for (;;) {
    const purged = await purgeBatch(request);
    total += purged;
    if (purged < request.batchSize || !keepGoing()) return total;
    await nextTurn();
  }
}

export interface PurgerOptions {
  register: EventRegister;
  now: () => number;
  log: Logger;
  /** SUCCEEDED events whose updated_at is older than this go, and ignored platform deliveries received before it. */
  retentionMs: number;
  batchSize?: number;
  intervalMs: number;
}

export interface PurgerEvents {
  /** After every completed run, with the number of events it removed (0 too). */
  purged: [count: number];
}

/**
 * Forgets SUCCEEDED events once they are older than the retention, so the
 * register does not grow without bound, the platforms' ignored deliveries as
 * old, and the console's expired sessions. Pending events are never purged:
 * the register is also the delivery queue. Nor are FAILED_FINAL ones: each was
 * acknowledged and is not in 1C, so it waits for support (a replay, or
 * `gateway purge --include-failed`), counted by gateway_failed_final_events.
 */
export class Purger extends EventEmitter<PurgerEvents> {
  readonly #register: EventRegister;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #retentionMs: number;
  readonly #batchSize: number;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #stopped = true;
  /** Bumped by stop(): a run that began before it ends at its next batch boundary. */
  #generation = 0;

  constructor(options: PurgerOptions) {
    super();
    this.#register = options.register;
    this.#now = options.now;
    this.#log = options.log.child({ component: "purger" });
    this.#retentionMs = options.retentionMs;
    this.#batchSize = options.batchSize ?? DEFAULT_PURGE_BATCH_SIZE;
    this.#intervalMs = options.intervalMs;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(Math.min(FIRST_RUN_DELAY_MS, this.#intervalMs));
  }

  /** Cancels the timer and waits for a running purge to finish its current batch. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#generation += 1;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // A failure was already reported to whoever started the run.
    await this.#running?.catch(() => undefined);
  }

  /** Purges everything due now; a call while a run is going joins that run. */
  runOnce(): Promise<number> {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #run(): Promise<number> {
    const generation = this.#generation;
    const olderThan = this.#now() - this.#retentionMs;
    const total = await purgeInBatches(
      this.#register,
      { olderThan, batchSize: this.#batchSize },
      () => generation === this.#generation,
    );
    if (total > 0) {
      this.#log.info({ purged: total, older_than: new Date(olderThan).toISOString() }, "purged finished events");
    }
    if (generation === this.#generation) {
      const sources = await purgeSourcesInBatches(
        this.#register,
        { olderThan, batchSize: this.#batchSize },
        () => generation === this.#generation,
      );
      if (sources > 0) {
        this.#log.info(
          { purged_deliveries: sources, older_than: new Date(olderThan).toISOString() },
          "purged ignored platform deliveries",
        );
      }
    }
    // Expired sessions already open nothing (find ignores them): this only keeps their table small.
    if (generation === this.#generation) {
      const sessions = await this.#register.sessions.purgeExpired(this.#now());
      if (sessions > 0) this.#log.info({ expired_sessions: sessions }, "purged expired console sessions");
    }
    this.emit("purged", total);
    return total;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.runOnce()
        .catch((error: unknown) => this.#log.error({ err: error }, "purge failed; will retry at the next interval"))
        .finally(() => {
          if (!this.#stopped && this.#timer === undefined) this.#schedule(this.#intervalMs);
        });
    }, delayMs);
    // Housekeeping alone must not keep a process alive that has nothing else to do.
    this.#timer.unref();
  }
}
