import { ALL_STATUSES, type EventStatus, isFinished } from "../domain/event-status.ts";
import type { BackendStatements, ChangeFeed } from "./backend.ts";
import type * as port from "./port.ts";
import { claimOf, toAttempt, toRecord, toReplay } from "./rows.ts";
import { importRows, searchRows } from "./rules.ts";
import type { SessionStore } from "./session-port.ts";
import type { SourceDeliveryLog } from "./source-port.ts";

/**
 * The register as the port defines it, on any backend's statements
 * (backend.ts): rows become records, and each committed change is told to the
 * watchers after its commit, never inside the transaction, so that a woken
 * waiter finds it. Backends extend it with their own statements.
 */
export class RegisterCore implements port.EventRegister {
  readonly #backend: BackendStatements;
  readonly sessions: SessionStore;
  readonly sources: SourceDeliveryLog;
  readonly hitCounter?: port.HitCounter;

  constructor(backend: BackendStatements) {
    this.#backend = backend;
    this.sessions = backend.sessions;
    this.sources = backend.sources;
    if (backend.hitCounter !== undefined) this.hitCounter = backend.hitCounter;
  }

  async reserve(request: port.ReserveRequest): Promise<port.ReserveResult> {
    const { created, row } = await this.#backend.queue.reserve(request);
    const record = toRecord(row);
    if (created) this.#changed("recorded", record);
    return { outcome: created ? "created" : "existing", record };
  }

  async claim(request: port.ClaimRequest): Promise<port.Claim[]> {
    return (await this.#backend.queue.claim(request)).map(claimOf);
  }

  async settle(
    lease: port.Lease,
    settlement: port.Settlement,
    report: port.AttemptReport,
    now: number,
  ): Promise<port.EventRecord | undefined> {
    const row = await this.#backend.queue.settle(lease, settlement, report, now);
    if (row === undefined) return undefined;
    const record = toRecord(row);
    this.#changed("settled", record);
    return record;
  }

  async bringForwardRetries(now: number): Promise<number> {
    const count = await this.#backend.queue.bringForward(now);
    if (count > 0) this.#backend.feed.local({ kind: "rescheduled", count });
    return count;
  }

  async replay(request: port.ReplayRequest): Promise<port.ReplayResult> {
    const outcome = await this.#backend.queue.replay(request);
    switch (outcome.kind) {
      case "missing":
        return outcome;
      case "refused":
        return { kind: "refused", reason: outcome.reason, record: toRecord(outcome.row) };
      case "replayed": {
        const record = toRecord(outcome.row);
        this.#changed("replayed", record);
        return { kind: "replayed", record, fromStatus: outcome.fromStatus };
      }
    }
  }

  watch(listener: (change: port.RegisterChange) => void): () => void {
    return this.#backend.feed.watch(listener);
  }

  #changed(kind: port.EventChange["kind"], record: port.EventRecord): void {
    this.#backend.feed.local({ kind, sender: record.sender, eventId: record.eventId, status: record.status, record });
  }

  async find(sender: string, eventId: string): Promise<port.EventRecord | undefined> {
    const row = await this.#backend.store.find(sender, eventId);
    return row === undefined ? undefined : toRecord(row);
  }

  async findByEventId(eventId: string): Promise<port.EventRecord[]> {
    return (await this.#backend.store.findByEventId(eventId)).map(toRecord);
  }

  async list(filter: port.ListFilter): Promise<port.EventRecord[]> {
    return (await this.#backend.store.list(filter)).map(toRecord);
  }

  async page(filter: port.ListFilter & { before?: port.PageCursor }): Promise<port.EventRecord[]> {
    return (await this.#backend.store.page(filter)).map(toRecord);
  }

  async search(term: string, limit: number): Promise<port.EventRecord[]> {
    const rows = searchRows(term, limit);
    if (rows === 0) return [];
    return (await this.#backend.store.search(term, rows)).map(toRecord);
  }

  /** Every status, counted or 0: a status without events still has its tab. */
  async countByStatus(filter: port.StatusCountFilter): Promise<Record<EventStatus, number>> {
    const counts = Object.fromEntries(ALL_STATUSES.map((status) => [status, 0])) as Record<EventStatus, number>;
    for (const row of await this.#backend.store.countByStatus(filter)) {
      if (row.status in counts) counts[row.status as EventStatus] = Number(row.count);
    }
    return counts;
  }

  backlog(): Promise<port.Backlog> {
    return this.#backend.store.backlog();
  }

  async listAttempts(sender: string, eventId: string): Promise<port.AttemptRecord[]> {
    return (await this.#backend.audit.attempts(sender, eventId)).map(toAttempt);
  }

  async listReplays(sender: string, eventId: string): Promise<port.ReplayRecord[]> {
    return (await this.#backend.audit.replays(sender, eventId)).map(toReplay);
  }

  purgeFinished(request: port.PurgeRequest): Promise<number> {
    return this.#backend.maintenance.purge(request);
  }

  countFinished(bound: port.PurgeBound): Promise<number> {
    return this.#backend.maintenance.countFinished(bound);
  }

  async importEvent(snapshot: port.EventSnapshot): Promise<"imported" | "present"> {
    const row = await this.#backend.maintenance.importEvent(importRows(snapshot));
    if (row === undefined) return "present";
    // This instance's watchers: a deliverer here may take it at once; others find it at their next poll.
    if (!isFinished(row.status)) this.#changed("recorded", toRecord(row));
    return "imported";
  }

  ping(): Promise<void> {
    return this.#backend.ping();
  }

  close(): Promise<void> {
    return this.#backend.close();
  }
}

/** The change feed of a backend that sees only its own process's commits (SQLite): waiters poll for the rest. */
export class LocalChangeFeed implements ChangeFeed {
  readonly #listeners = new Set<(change: port.RegisterChange) => void>();

  watch(listener: (change: port.RegisterChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  local(change: port.RegisterChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}
