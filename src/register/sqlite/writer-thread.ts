import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { JobResult } from "../write-batcher.ts";
import { batchTransaction } from "./batch-transaction.ts";
import { openConnection } from "./open-connection.ts";
import { prepareWriteStatements, runWriteJob, type WriteJob } from "./write-ops.ts";

/**
 * The writer thread: it owns the register's writing connection for a busy
 * process, so BEGIN IMMEDIATE, the statements and the COMMIT's fsync run
 * here while the main thread goes on parsing, validating and answering (a
 * quiet process's small batches commit on the main thread: quiet-commits.ts).
 * It takes one batch at a time, answers each with its results, and
 * checkpoints the WAL after its commits.
 */

export interface WriterThreadData {
  file: string;
  busyTimeoutMs: number;
}

export type WriterRequest = { kind: "batch"; id: number; jobs: WriteJob[] } | { kind: "close" };

export interface WriterReply {
  id: number;
  results: CloneableResult[];
}

/** A job's outcome as it crosses threads: an error's class does not survive the clone, so it is said. */
export type CloneableResult = { ok: true; value: unknown } | { ok: false; error: CloneableError };

export interface CloneableError {
  message: string;
  /** A TypeError stays one: better-sqlite3 throws it for a connection that is closed (a 503, not a 500). */
  typeError?: true;
  /** SQLite's own error code (SQLITE_BUSY, SQLITE_FULL…), when SQLite raised it. */
  sqliteCode?: string;
}

const port = parentPort;
if (port === null) throw new Error("writer-thread.ts runs only as a worker thread");
const { file, busyTimeoutMs } = workerData as WriterThreadData;
const db = openConnection(file, busyTimeoutMs);
const sql = prepareWriteStatements(db);
const commit = batchTransaction(db, (job: WriteJob) => runWriteJob(sql, job));

port.on("message", (request: WriterRequest) => {
  if (request.kind === "close") {
    db.close();
    port.close();
    return;
  }
  let results: JobResult[];
  try {
    results = commit(request.jobs);
  } catch (error) {
    // BEGIN or COMMIT failed: nothing of the batch is durable.
    results = request.jobs.map(() => ({ ok: false, error }));
  }
  const reply: WriterReply = { id: request.id, results: results.map(cloneable) };
  port.postMessage(reply);
});

function cloneable(result: JobResult): CloneableResult {
  if (result.ok) return result;
  const { error } = result;
  if (error instanceof Database.SqliteError)
    return { ok: false, error: { message: error.message, sqliteCode: error.code } };
  if (error instanceof TypeError) return { ok: false, error: { message: error.message, typeError: true } };
  return { ok: false, error: { message: error instanceof Error ? error.message : String(error) } };
}
