import type Database from "better-sqlite3";
import { EventStatus } from "../event-status.ts";
import type {
  AttemptReport,
  ClaimRequest,
  EventSnapshot,
  Lease,
  PurgeRequest,
  ReplayRequest,
  ReserveRequest,
  Settlement,
} from "../port.ts";
import type { EventRow } from "../rows.ts";
import { type ImportStatements, importSnapshot, prepareImportStatements } from "./import-events.ts";
import { prepareSessionStatements, type SessionStatements, sessionWriteOps } from "./session-statements.ts";
import { prepareStatements, type Statements, settleStatement } from "./statements.ts";

/**
 * Every write the SQLite register makes, as a named operation on plain data:
 * what goes in and what comes out can cross to the writer thread (structured
 * clone), so the same code runs there or, for an in-memory database, on the
 * main thread. Each runs inside its batch's transaction, in its own savepoint.
 * Rows come back raw; the register maps them to records.
 */
export const writeOps = {
  reserve(sql: WriteStatements, request: ReserveRequest): { created: boolean; row: EventRow } {
    const inserted = sql.events.insert.get(request);
    if (inserted !== undefined) return { created: true, row: inserted };
    const existing = sql.events.select.get(request.sender, request.eventId);
    if (existing === undefined) throw new Error("row vanished inside its own transaction");
    return { created: false, row: existing };
  },

  claim(sql: WriteStatements, request: ClaimRequest): EventRow[] {
    const { now, owner } = request;
    const candidates =
      request.only === undefined
        ? sql.events.selectDue.all({ now, limit: request.limit })
        : sql.events.selectDueOne.all({ now, sender: request.only.sender, eventId: request.only.eventId });
    const claimed: EventRow[] = [];
    for (const row of candidates) {
      const taken = sql.events.claim.get({
        sender: row.sender,
        eventId: row.event_id,
        now,
        owner,
        leaseUntil: now + request.leaseMs,
      });
      if (taken === undefined) continue;
      sql.events.insertAttempt.run({
        sender: taken.sender,
        eventId: taken.event_id,
        attempt: taken.attempts,
        leaseToken: taken.lease_token,
        worker: owner,
        startedAt: now,
      });
      claimed.push(taken);
    }
    return claimed;
  },

  settle(
    sql: WriteStatements,
    { lease, settlement, report, now }: { lease: Lease; settlement: Settlement; report: AttemptReport; now: number },
  ): EventRow | undefined {
    const key = { sender: lease.sender, eventId: lease.eventId, token: lease.token, now };
    const settled = settleStatement(sql.events, key, settlement);
    // The attempt's own history row is written even when the lease was lost.
    sql.events.finishAttempt.run({
      ...key,
      finishedAt: now,
      durationMs: report.durationMs,
      outcome: report.outcome,
      httpStatus: report.httpStatus ?? null,
      errorClass: report.errorClass ?? null,
      detail: report.detail ?? null,
      applied: settled === undefined ? 0 : 1,
    });
    return settled;
  },

  bringForward(sql: WriteStatements, { now }: { now: number }): number {
    return sql.events.bringForward.run({ now }).changes;
  },

  replay(sql: WriteStatements, request: ReplayRequest): ReplayOutcome {
    const { sender, eventId, now } = request;
    const row = sql.events.select.get(sender, eventId);
    if (row === undefined) return { result: "not_found" };
    if (row.status === EventStatus.SUCCEEDED && !request.force) return { result: "refused", reason: "succeeded", row };
    if (row.lease_until !== null && row.lease_until > now) return { result: "refused", reason: "in_flight", row };
    const replayed = sql.events.replay.get({ sender, eventId, now });
    if (replayed === undefined) throw new Error("row vanished inside its own transaction");
    sql.events.insertReplay.run({
      sender,
      eventId,
      requestedBy: request.requestedBy,
      reason: request.reason,
      forced: request.force ? 1 : 0,
      fromStatus: row.status,
      requestedAt: now,
    });
    return { result: "replayed", row: replayed, fromStatus: row.status };
  },

  purgeFinished(sql: WriteStatements, request: PurgeRequest): number {
    // Attempts and replays go by ON DELETE CASCADE; `changes` counts only the events themselves.
    return sql.events.purge.run({ olderThan: request.olderThan, limit: request.batchSize }).changes;
  },

  importEvent(sql: WriteStatements, snapshot: EventSnapshot): EventRow | undefined {
    return importSnapshot(sql.imports(), snapshot);
  },

  ...sessionWriteOps,

  /** Nothing: its batch's BEGIN IMMEDIATE is the proof that the write lock can be taken. */
  ping(_sql: WriteStatements, _none: null): null {
    return null;
  },

  /** What the writing connection runs with: pragmas fail silently on some file systems. */
  durability(sql: WriteStatements, _none: null): Durability {
    const journalMode = String(sql.db.pragma("journal_mode", { simple: true }));
    const level = Number(sql.db.pragma("synchronous", { simple: true }));
    return { journalMode, synchronous: (["OFF", "NORMAL", "FULL", "EXTRA"] as const)[level] ?? "OFF" };
  },
};

export type ReplayOutcome =
  | { result: "replayed"; row: EventRow; fromStatus: EventStatus }
  | { result: "not_found" }
  | { result: "refused"; reason: "succeeded" | "in_flight"; row: EventRow };

export interface Durability {
  journalMode: string;
  synchronous: "OFF" | "NORMAL" | "FULL" | "EXTRA";
}

type WriteOps = typeof writeOps;
export type WriteOp = keyof WriteOps;
export type WriteArgs<K extends WriteOp> = Parameters<WriteOps[K]>[1];
export type WriteResult<K extends WriteOp> = ReturnType<WriteOps[K]>;

/** One operation to run, as it is queued and posted to the writer thread. */
export interface WriteJob {
  op: WriteOp;
  args: unknown;
}

/** Submits one write; resolves after the commit of its batch. */
export type WriteRunner = <K extends WriteOp>(op: K, args: WriteArgs<K>) => Promise<WriteResult<K>>;

/** The statements of a writing connection; the import's only when `gateway import` runs. */
export interface WriteStatements {
  db: Database.Database;
  events: Statements;
  sessions: SessionStatements;
  imports(): ImportStatements;
}

export function prepareWriteStatements(db: Database.Database): WriteStatements {
  let imports: ImportStatements | undefined;
  return {
    db,
    events: prepareStatements(db),
    sessions: prepareSessionStatements(db),
    imports: () => {
      imports ??= prepareImportStatements(db);
      return imports;
    },
  };
}

export function runWriteJob(sql: WriteStatements, job: WriteJob): unknown {
  const operation = writeOps[job.op] as (sql: WriteStatements, args: unknown) => unknown;
  return operation(sql, job.args);
}
