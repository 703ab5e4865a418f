import { once } from "node:events";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { codeModule, RUNNING_FROM_SOURCE } from "../../util/package-files.ts";
import { StorageUnavailableError } from "../port.ts";
import { type CommitBatch, type JobResult, WriteBatcher } from "../write-batcher.ts";
import { batchTransaction } from "./batch-transaction.ts";
import { isBusy, openConnection } from "./open-connection.ts";
import { QUIET_COMMIT_LIMITS, type QuietCommitLimits, QuietCommits } from "./quiet-commits.ts";
import {
  prepareWriteStatements,
  runWriteJob,
  type WriteArgs,
  type WriteJob,
  type WriteOp,
  type WriteResult,
  type WriteRunner,
} from "./write-ops.ts";
import type { CloneableResult, WriterReply, WriterRequest, WriterThreadData } from "./writer-thread.ts";

/** Where the register's writes run; either way by group commit, each answered after its batch's commit. */
export interface Writer {
  run: WriteRunner;
  /** Commits what is queued now instead of at the end of the turn (see ReadBatcher). */
  flushQueued(): void;
  /** Waits for every queued write, then stops taking more. */
  close(): Promise<void>;
  /** How many batches committed on the event loop's thread and on the writer thread so far. */
  commits(): CommitCounts;
}

export interface CommitCounts {
  here: number;
  writerThread: number;
}

/**
 * A file's writes go to a writer thread, so that under load the commit's
 * fsync never blocks the event loop; a quiet gateway's small batches commit
 * here, on a connection of their own, without the two thread hand-offs
 * (quiet-commits.ts). An in-memory database exists only on its own
 * connection: its writes run here, on the register's connection.
 */
export function openWriter(
  db: Database.Database,
  data: WriterThreadData,
  quietLimits: QuietCommitLimits = QUIET_COMMIT_LIMITS,
): Writer {
  if (data.file !== ":memory:") return fileWriter(data, quietLimits);
  const sql = prepareWriteStatements(db);
  const commits: CommitCounts = { here: 0, writerThread: 0 };
  const commit = batchTransaction(db, (job: WriteJob) => runWriteJob(sql, job));
  return new GroupCommitWriter((jobs) => {
    const results = commit(jobs);
    commits.here++;
    return results;
  }, commits);
}

function fileWriter(data: WriterThreadData, quietLimits: QuietCommitLimits): Writer {
  const thread = new WriterThread(data);
  const here = openConnection(data.file, data.busyTimeoutMs);
  // Never wait for another process's write lock on the event loop: the writer thread waits for it instead.
  here.pragma("busy_timeout = 0");
  // Checkpoints stay on the writer thread (quiet-commits.ts).
  here.pragma("wal_autocheckpoint = 0");
  const sql = prepareWriteStatements(here);
  const commitHere = batchTransaction(here, (job: WriteJob) => runWriteJob(sql, job));
  const quiet = new QuietCommits(quietLimits);
  const commits: CommitCounts = { here: 0, writerThread: 0 };
  const commit: CommitBatch<WriteJob> = (jobs) => {
    if (!jobs.some(isBulk) && quiet.allows(jobs.length, thread.busy)) {
      const started = performance.now();
      try {
        const results = commitHere(jobs);
        commits.here++;
        return results;
      } catch (error) {
        // Anything but busy: nothing of the batch is durable, and the batcher fails it.
        if (!isBusy(error)) throw error;
      } finally {
        quiet.took(performance.now() - started);
      }
    }
    commits.writerThread++;
    return thread.commit(jobs);
  };
  return new GroupCommitWriter(commit, commits, async () => {
    await thread.stop();
    here.close();
  });
}

/**
 * Work whose size is not the batch's: a purge deletes up to 500 events, each
 * with its attempts and index entries (150–200 ms with 200 KB bodies), and an
 * import writes whole events. Alone, such a job is a batch of one, small by
 * count, and would stall the event loop for all of it; it goes to the thread.
 */
const BULK_OPS: ReadonlySet<WriteOp> = new Set<WriteOp>([
  "purgeFinished",
  "purgeSources",
  "purgeSessions",
  "bringForward",
  "importEvent",
  "importSource",
]);

function isBulk(job: WriteJob): boolean {
  return BULK_OPS.has(job.op);
}

const MAX_BATCH = 256;
/**
 * Two batches out at once: the thread finds the next one waiting when it ends
 * a commit, instead of idling through the round trip to this thread and back
 * (0.4–0.8 ms under load, as long as a small commit). It still commits them
 * one after the other, in the order they were sent. Measured on the drain
 * (settles and claims in small batches): +15–30 % events/s.
 */
const BATCHES_IN_FLIGHT = 2;

class GroupCommitWriter implements Writer {
  readonly #batches: WriteBatcher<WriteJob>;
  readonly #commits: Readonly<CommitCounts>;
  readonly #stop: () => Promise<void>;
  #closed = false;

  constructor(
    commit: CommitBatch<WriteJob>,
    commits: Readonly<CommitCounts>,
    stop: () => Promise<void> = async () => {},
  ) {
    this.#batches = new WriteBatcher(commit, MAX_BATCH, BATCHES_IN_FLIGHT);
    this.#commits = commits;
    this.#stop = stop;
  }

  commits(): CommitCounts {
    return { ...this.#commits };
  }

  run<K extends WriteOp>(op: K, args: WriteArgs<K>): Promise<WriteResult<K>> {
    if (this.#closed) return Promise.reject(new StorageUnavailableError("the register is closed"));
    return this.#batches.submit({ op, args }) as Promise<WriteResult<K>>;
  }

  flushQueued(): void {
    this.#batches.flushQueued();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#batches.idle();
    await this.#stop();
  }
}

interface Waiting {
  resolve: (results: JobResult[]) => void;
  reject: (error: unknown) => void;
  /** The thread the batch was sent to. */
  worker: Worker;
}

/**
 * The main thread's side of the writer thread. It is held (ref) only while
 * a batch is out, so an idle register never keeps a process alive. A thread
 * that dies fails its batch (503: the sender retries with the same
 * event_id, which is safe whether or not it was committed) and is started
 * again for the next one.
 */
export class WriterThread {
  readonly #data: WriterThreadData;
  readonly #spawn: (data: WriterThreadData) => Worker;
  readonly #waiting = new Map<number, Waiting>();
  #worker: Worker | undefined;
  #nextId = 1;

  /** `spawn` starts a thread: writer-thread.ts, unless a test stages one that dies. */
  constructor(data: WriterThreadData, spawn: (data: WriterThreadData) => Worker = spawnWriterThread) {
    this.#data = data;
    this.#spawn = spawn;
    // Started now, not on the first write: the thread takes a tenth of a second to load.
    this.#worker = this.#start();
  }

  /** Whether a batch is out: one committed elsewhere meanwhile could overtake it. */
  get busy(): boolean {
    return this.#waiting.size > 0;
  }

  commit(jobs: readonly WriteJob[]): Promise<JobResult[]> {
    this.#worker ??= this.#start();
    const worker = this.#worker;
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject, worker });
      worker.ref();
      try {
        worker.postMessage({ kind: "batch", id, jobs: [...jobs] } satisfies WriterRequest);
      } catch (error) {
        this.#waiting.delete(id);
        if (this.#waiting.size === 0) worker.unref();
        reject(error);
      }
    });
  }

  async stop(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    worker.ref();
    const exited = once(worker, "exit");
    worker.postMessage({ kind: "close" } satisfies WriterRequest);
    await exited;
  }

  #start(): Worker {
    const worker = this.#spawn(this.#data);
    worker.unref();
    worker.on("message", (reply: WriterReply) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) worker.unref();
      waiting?.resolve(reply.results.map(fromCloneable));
    });
    // A thread that throws emits "error", then "exit": the first fails its batches, the second finds none left.
    worker.on("error", (error) => this.#lost(worker, error));
    worker.on("exit", (code) => this.#lost(worker, new Error(`the writer thread exited with code ${code}`)));
    return worker;
  }

  /**
   * Fails the batches sent to this thread, and only those: by the time a dead
   * thread's "exit" comes, the next batches may be out to its successor, and
   * failing them would answer 503 for work that thread then commits (and
   * leave `busy` false while it writes).
   */
  #lost(worker: Worker, cause: unknown): void {
    if (this.#worker === worker) this.#worker = undefined;
    const error = new StorageUnavailableError("the register's writer thread stopped", { cause });
    for (const [id, waiting] of this.#waiting) {
      if (waiting.worker !== worker) continue;
      this.#waiting.delete(id);
      waiting.reject(error);
    }
  }
}

/**
 * The thread's module, as the gateway runs (RUNNING_FROM_SOURCE decides):
 * - built (dist/, production): a Worker on writer-thread.js, plain node;
 * - from the sources (tests, demo): Node 20 gives a worker none of the
 *   parent's --import hooks, so the thread registers tsx (a devDependency)
 *   itself, then loads writer-thread.ts. tsx's require hook, not its ESM
 *   loader: the loader would start a module-hooks thread of its own (one more
 *   V8 isolate, ~20 MB of RSS) for a handful of modules that need nothing of ESM.
 */
export function spawnWriterThread(data: WriterThreadData): Worker {
  const entry = codeModule("register/sqlite/writer-thread");
  if (!RUNNING_FROM_SOURCE) return new Worker(entry, { workerData: data });
  const tsx = createRequire(import.meta.url).resolve("tsx/cjs/api");
  const bootstrap = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(fileURLToPath(entry))});`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}

/** SQLite's errors come back as SqliteError, so the register maps them as it maps its own connection's. */
function fromCloneable(result: CloneableResult): JobResult {
  if (result.ok) return result;
  const { message, sqliteCode, typeError } = result.error;
  if (sqliteCode !== undefined) return { ok: false, error: new Database.SqliteError(message, sqliteCode) };
  return { ok: false, error: typeError === true ? new TypeError(message) : new Error(message) };
}
