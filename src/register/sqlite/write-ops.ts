import type Database from "better-sqlite3";
import type { ReplayRows } from "../backend.ts";
import type {
  AttemptReport,
  ClaimRequest,
  Lease,
  PurgeRequest,
  ReplayRequest,
  ReserveRequest,
  Settlement,
} from "../port.ts";
import { acceptedSourceRow, type EventRow, type MovedSourceRow } from "../rows.ts";
import {
  claimKind,
  finishedAttempt,
  type ImportRows,
  isRelease,
  replayAudit,
  replayedColumns,
  replayRefusal,
  settledColumns,
  settleReleases,
} from "../rules.ts";
import { prepareSessionStatements, type SessionStatements, sessionWriteOps } from "./session-statements.ts";
import { prepareSourceStatements, type SourceStatements, sourceWriteOps } from "./source-statements.ts";
import {
  type ImportStatements,
  prepareImportStatements,
  prepareStatements,
  purgeBindings,
  type Statements,
} from "./statements.ts";

/**
 * Every write the SQLite register makes, as a named operation on plain data:
 * what goes in and what comes out can cross to the writer thread (structured
 * clone), so the same code runs there or, for an in-memory database, on the
 * main thread. Each runs inside its batch's transaction, in its own savepoint.
 * Rows come back raw; RegisterCore maps them to records.
 */
export const writeOps = {
  /** A new event's platform delivery (ReserveRequest.source) goes in with it, in the same savepoint. */
  reserve(sql: WriteStatements, request: ReserveRequest): { created: boolean; row: EventRow } {
    // The statement names every parameter: a request without a trace context binds NULL.
    const inserted = sql.events.insert.get(
      request.traceContext === undefined ? { ...request, traceContext: null } : request,
    );
    if (inserted !== undefined) {
      const { source } = request;
      if (source !== undefined) sql.sources.insertAccepted.run(acceptedSourceRow({ ...request, source }));
      return { created: true, row: inserted };
    }
    return { created: false, row: present(sql.events.select.get(request.sender, request.eventId)) };
  },

  claim(sql: WriteStatements, request: ClaimRequest): EventRow[] {
    const { now, owner } = request;
    const kind = claimKind(request);
    const candidates =
      request.only !== undefined
        ? sql.events.selectDueOne.all({ now, ...request.only })
        : (kind === "ahead" ? sql.events.selectDueAhead : sql.events.selectDue).all({ now, limit: request.limit });
    const claimed: EventRow[] = [];
    for (const row of candidates) {
      const key = { sender: row.sender, eventId: row.event_id };
      const taken = sql.events.claim.get({ ...key, now, owner, leaseUntil: now + request.leaseMs });
      if (taken === undefined) continue;
      sql.events.insertAttempt.run({
        ...key,
        attempt: taken.attempts,
        leaseToken: taken.lease_token,
        worker: owner,
        startedAt: now,
        kind,
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
    if (isRelease(settlement)) {
      const released = sql.events.release.get(key);
      if (released !== undefined) sql.events.deleteAttempt.run(key);
      return released;
    }
    const columns = settledColumns(settlement);
    const settled = sql.events.settle(columns).get({ ...key, ...columns, ...settleReleases(settlement) });
    sql.events.finishAttempt.run({ ...key, ...finishedAttempt(report), applied: settled === undefined ? 0 : 1 });
    return settled;
  },

  bringForward(sql: WriteStatements, { now }: { now: number }): number {
    return sql.events.bringForward.run({ now }).changes;
  },

  replay(sql: WriteStatements, request: ReplayRequest): ReplayRows {
    const { sender, eventId, now } = request;
    // The batch's write lock holds the row still while the refusal is decided on it.
    const row = sql.events.select.get(sender, eventId);
    if (row === undefined) return { kind: "missing" };
    const refusal = replayRefusal(row, request, now);
    if (refusal !== undefined) return { kind: "refused", reason: refusal, row };
    const columns = replayedColumns(row, now);
    const replayed = present(sql.events.replay(columns).get({ sender, eventId, ...columns }));
    sql.events.insertReplay.run({ sender, event_id: eventId, ...replayAudit(request, row, now) });
    return { kind: "replayed", row: replayed, fromStatus: row.status };
  },

  purgeFinished(sql: WriteStatements, request: PurgeRequest): number {
    // Attempts and replays go by ON DELETE CASCADE; `changes` counts only the events themselves.
    return sql.events.purge.run({ ...purgeBindings(request), limit: request.batchSize }).changes;
  },

  importEvent(sql: WriteStatements, rows: ImportRows): EventRow | undefined {
    const imports = sql.imports();
    const row = imports.event.get(rows.event);
    if (row === undefined) return undefined;
    const key = { sender: row.sender, event_id: row.event_id };
    for (const attempt of rows.attempts) imports.attempt.run({ ...key, ...attempt });
    for (const replay of rows.replays) sql.events.insertReplay.run({ ...key, ...replay });
    if (rows.source !== null) sql.sources.insert.run(rows.source);
    return row;
  },

  /** True if written; false when the delivery was there already (SourceDeliveryLog.importDelivery). */
  importSource(sql: WriteStatements, row: MovedSourceRow): boolean {
    return sql.imports().source.get(row) !== undefined;
  },

  ...sessionWriteOps,
  ...sourceWriteOps,

  /**
   * Readiness's probe: a row of a large order's size, written and deleted in
   * the batch's transaction. A batch with nothing to write commits without
   * touching the file, so the write lock alone says nothing on a full disk;
   * these pages must reach the WAL, as a reservation's must.
   */
  ping(sql: WriteStatements, now: number): null {
    const written = sql.probe.insert.get(now, PROBE_PAYLOAD);
    if (written !== undefined) sql.probe.remove.run(written.id);
    return null;
  },

  /** What the writing connection runs with: pragmas fail silently on some file systems. */
  durability(sql: WriteStatements, _none: null): Durability {
    const journalMode = String(sql.db.pragma("journal_mode", { simple: true }));
    const level = Number(sql.db.pragma("synchronous", { simple: true }));
    return { journalMode, synchronous: (["OFF", "NORMAL", "FULL", "EXTRA"] as const)[level] ?? "OFF" };
  },
};

/**
 * Larger than a page (4 KiB), as a large order's body or a platform's payload
 * is: the probe needs overflow pages, not just room in a leaf.
 */
const PROBE_PAYLOAD = "p".repeat(6 * 1024);

/** A row the transaction has just seen or written is there. */
function present(row: EventRow | undefined): EventRow {
  if (row === undefined) throw new Error("row vanished inside its own transaction");
  return row;
}

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
  sources: SourceStatements;
  probe: {
    insert: Database.Statement<[number, string], { id: number }>;
    remove: Database.Statement<[number]>;
  };
  imports(): ImportStatements;
}

export function prepareWriteStatements(db: Database.Database): WriteStatements {
  let imports: ImportStatements | undefined;
  return {
    db,
    events: prepareStatements(db),
    sessions: prepareSessionStatements(db),
    sources: prepareSourceStatements(db),
    probe: {
      insert: db.prepare<[number, string], { id: number }>(
        "INSERT INTO register_probe (probed_at, payload) VALUES (?, ?) RETURNING id",
      ),
      remove: db.prepare<[number]>("DELETE FROM register_probe WHERE id = ?"),
    },
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
