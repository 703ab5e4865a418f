import { withinDeadline } from "../util/deadline.ts";
import { type EventRegister, type RegisterWritability, StorageUnavailableError } from "./port.ts";

/** How often the background probe writes: a change shows within this plus the deadline. */
export const PROBE_EVERY_MS = 250;
/** A probe not committed by then counts as a failure: a hung database must not look writable. */
export const PROBE_DEADLINE_MS = 500;

/** Where each change of state is told: one line per change (a pino Logger is one). */
export interface StateLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface WritabilityOptions {
  /** One honest write (the register's ping): resolves once committed, rejects otherwise. */
  probe: () => Promise<void>;
  log: StateLog;
  everyMs?: number;
  deadlineMs?: number;
  now?: () => number;
}

/**
 * Whether the register can write, kept up to date so that /readyz answers
 * from memory instead of waiting on a database that may hang. Two kinds of
 * evidence, the newest winning: a probe every `everyMs` (at most one in
 * flight, each with its own deadline), and the outcome of real writes (a
 * StorageUnavailableError marks the register unwritable at once; a write that
 * committed something marks it writable). One log line per change, not per probe.
 */
export class Writability implements RegisterWritability {
  readonly #options: Required<WritabilityOptions>;
  #writable = true;
  #reason: string | undefined;
  #since: number;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #closed = false;

  constructor(options: WritabilityOptions) {
    this.#options = { everyMs: PROBE_EVERY_MS, deadlineMs: PROBE_DEADLINE_MS, now: Date.now, ...options };
    this.#since = this.#options.now();
  }

  get writable(): boolean {
    return this.#writable;
  }

  get reason(): string | undefined {
    return this.#reason;
  }

  /** Probes now, then every `everyMs` until close. */
  start(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(() => this.#probeOnce(), this.#options.everyMs);
    // Readiness alone must not keep a process alive.
    this.#timer.unref();
    this.#probeOnce();
  }

  /** The register is closing: no more probes, and not writable from now on (without a log line: nothing failed). */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#writable = false;
    this.#reason = "the register is closed";
  }

  /**
   * Passes a real write's outcome through, learning from it: `wrote` says
   * whether its success proves anything (a reservation that found its event
   * already recorded committed nothing, and nothing also commits on a full disk).
   */
  async observe<T>(write: Promise<T>, wrote: (value: T) => boolean): Promise<T> {
    try {
      const value = await write;
      if (wrote(value)) this.#learn(undefined);
      return value;
    } catch (error) {
      if (error instanceof StorageUnavailableError) this.#learn(error.message);
      throw error;
    }
  }

  #probeOnce(): void {
    // A probe still waiting (past its deadline, already counted) is not joined by another behind it.
    if (this.#probing) return;
    this.#probing = true;
    const { probe, deadlineMs } = this.#options;
    const settled = probe().then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    void settled.finally(() => {
      this.#probing = false;
    });
    void withinDeadline(settled, deadlineMs, `no probe write committed within ${deadlineMs} ms`).then((reason) => {
      if (!this.#closed) this.#learn(reason);
    });
  }

  /** `reason` undefined: the register wrote. */
  #learn(reason: string | undefined): void {
    if (this.#closed) return;
    this.#reason = reason;
    const writable = reason === undefined;
    if (writable === this.#writable) return;
    const now = this.#options.now();
    const lastedMs = now - this.#since;
    this.#writable = writable;
    this.#since = now;
    if (writable) this.#options.log.info({ unwritable_ms: lastedMs }, "register writable again: ready");
    else this.#options.log.warn({ reason }, "register not writable: not ready, /readyz answers 503");
  }
}

/**
 * The register with its writes reported to `writability`, which it carries
 * for /readyz: reservations and settlements (the writes every event makes)
 * feed it, and closing stops its probe. Everything else is the register's own.
 */
export function reportingWrites(register: EventRegister, writability: Writability): EventRegister {
  const own: Partial<EventRegister> = {
    writability,
    reserve: (request) => writability.observe(register.reserve(request), (result) => result.outcome === "created"),
    // Every request reads first: a read the database refuses says as much as a refused write (a read
    // that works says nothing about writing).
    find: (sender, eventId) => writability.observe(register.find(sender, eventId), () => false),
    // Even a lost lease writes its attempt's history row.
    settle: (lease, settlement, report, now) =>
      writability.observe(register.settle(lease, settlement, report, now), () => true),
    close: () => {
      writability.close();
      return register.close();
    },
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(register, {
    get(target, key) {
      if (key in own) return own[key as keyof EventRegister];
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      // The register's private fields need the register itself as `this`.
      if (!bound.has(key)) bound.set(key, value.bind(target));
      return bound.get(key);
    },
  });
}
