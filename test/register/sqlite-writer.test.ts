import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { statSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import { openConnection } from "../../src/register/sqlite/open-connection.ts";
import { QUIET_COMMIT_LIMITS } from "../../src/register/sqlite/quiet-commits.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import type { WriteJob } from "../../src/register/sqlite/write-ops.ts";
import { openWriter, spawnWriterThread, type Writer, WriterThread } from "../../src/register/sqlite/writer.ts";
import { reserveRequest } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Where a file's writes commit (src/register/sqlite/writer.ts and
 * quiet-commits.ts): a lone write on the event loop's own connection, without
 * the two hand-offs to the writer thread; 50 at once on the writer thread;
 * and never a wait for another process's lock on the event loop.
 */

const BUSY_TIMEOUT_MS = 5000;

describe("the SQLite register's writer, on a file", () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  let db: Database.Database;
  let writer: Writer;

  beforeEach(async () => {
    dir = tempDir("sqlite-writer-");
    file = join(dir.path, "register.db");
    await new SqliteRegister(file).close(); // the migrations
    db = openConnection(file, BUSY_TIMEOUT_MS);
    writer = openWriter(db, { file, busyTimeoutMs: BUSY_TIMEOUT_MS });
  });
  afterEach(async () => {
    await writer.close();
    db.close();
    dir.remove();
  });

  const committed = (eventId: string) => {
    const reader = new Database(file, { readonly: true });
    try {
      return reader.prepare("SELECT count(*) AS n FROM inbound_events WHERE event_id = ?").get(eventId) as {
        n: number;
      };
    } finally {
      reader.close();
    }
  };

  it("commits a lone write on the event loop's thread, answered once another connection sees it", async () => {
    const result = await writer.run("reserve", reserveRequest({ eventId: "lone" }));
    expect(result.created).toBe(true);
    expect(committed("lone")).toEqual({ n: 1 });
    expect(writer.commits()).toEqual({ here: 1, writerThread: 0 });
  });

  it("commits 50 writes made at once on the writer thread, as one batch", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => writer.run("reserve", reserveRequest({ eventId: `burst-${i}` }))),
    );
    expect(results.every((result) => result.created)).toBe(true);
    expect(committed("burst-49")).toEqual({ n: 1 });
    expect(writer.commits()).toEqual({ here: 0, writerThread: 1 });
  });

  it("sends a purge to the writer thread even when it is alone: its size is not its batch's", async () => {
    await writer.run("reserve", reserveRequest({ eventId: "kept" }));
    expect(writer.commits()).toEqual({ here: 1, writerThread: 0 });
    await writer.run("purgeFinished", { olderThan: Date.now(), batchSize: 500 });
    await writer.run("purgeSources", { olderThan: Date.now(), batchSize: 500 });
    await writer.run("purgeSessions", { now: Date.now() });
    expect(writer.commits()).toEqual({ here: 1, writerThread: 3 });
  });

  it("keeps the WAL bounded while a quiet gateway commits on the event loop: the writer thread's commits checkpoint it", async () => {
    // Only the checkpoint rule sends batches to the thread here, however slow a busy test machine's fsyncs.
    await writer.close();
    writer = openWriter(
      db,
      { file, busyTimeoutMs: BUSY_TIMEOUT_MS },
      {
        ...QUIET_COMMIT_LIMITS,
        maxShare: Number.POSITIVE_INFINITY,
        slowMs: Number.POSITIVE_INFINITY,
      },
    );
    // About 10 pages each: without a checkpoint, 1 000 of them leave a WAL of some 40 MB.
    for (let i = 0; i < 1000; i++) await writer.run("reserve", reserveRequest({ eventId: `quiet-${i}` }));
    // One batch in 33 goes to the writer thread.
    expect(writer.commits()).toEqual({ here: 970, writerThread: 30 });
    // SQLite checkpoints at 1 000 pages of 4 KiB and then writes the WAL from its start again.
    expect(statSync(`${file}-wal`).size).toBeLessThan(8 * 1024 * 1024);
    expect(committed("quiet-999")).toEqual({ n: 1 });
  });

  it("never waits for another process's write lock on the event loop: the writer thread waits, and commits after it", async () => {
    const holder = await holdWriteLock(file);
    const write = writer.run("reserve", reserveRequest({ eventId: "behind-a-lock" }));
    let settled = false;
    void write.finally(() => {
      settled = true;
    });
    // A timer of 20 ms fires on time: nothing holds the event loop, though the write cannot commit yet.
    // A writer that waited on this thread would hold it for the busy timeout (5 s): 1 s tells that apart
    // with room for a loaded machine.
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(settled).toBe(false);

    await release(holder);
    expect((await write).created).toBe(true);
    expect(committed("behind-a-lock")).toEqual({ n: 1 });
    expect(writer.commits()).toEqual({ here: 0, writerThread: 1 });
  });
});

describe("the SQLite register's writer thread, when one dies", () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;

  beforeEach(async () => {
    dir = tempDir("sqlite-writer-lost-");
    file = join(dir.path, "register.db");
    await new SqliteRegister(file).close(); // the migrations
  });
  afterEach(() => dir.remove());

  it("fails only the batches sent to it: the next thread's batch, sent before the dead one's exit, commits and is answered", async () => {
    let spawned = 0;
    // The first thread throws at its first batch (a bug, or out of memory); the next ones are the real writer thread.
    const thread = new WriterThread({ file, busyTimeoutMs: BUSY_TIMEOUT_MS }, (data) => {
      spawned++;
      if (spawned > 1) return spawnWriterThread(data);
      return new Worker(
        `require("node:worker_threads").parentPort.on("message", (m) => { if (m.kind === "batch") throw new Error("boom"); process.exit(0); });`,
        { eval: true },
      );
    });
    const batch = (name: string) => [{ op: "reserve", args: reserveRequest({ eventId: name }) } satisfies WriteJob];
    const first = thread.commit(batch("to-the-dead-one"));
    const firstFailed = first.then(
      () => false,
      (error: unknown) => error instanceof StorageUnavailableError,
    );
    // Failed at the dead thread's "error"; its "exit" comes later, once the next batch is out to its successor.
    expect(await firstFailed).toBe(true);
    const [second] = await thread.commit(batch("to-the-next-one"));
    expect(second).toMatchObject({ ok: true, value: { created: true } });
    expect(thread.busy).toBe(false);
    await thread.stop();
    const reader = new Database(file, { readonly: true });
    try {
      const rows = reader.prepare("SELECT event_id FROM inbound_events ORDER BY event_id").all();
      expect(rows).toEqual([{ event_id: "to-the-next-one" }]);
    } finally {
      reader.close();
    }
  });
});

describe("the SQLite register's writer thread's errors, as they cross to the main thread", () => {
  it("keeps a closed connection's TypeError one, so the register answers it as storage unavailable (503)", async () => {
    // A thread that answers every batch as better-sqlite3 fails on a closed connection.
    const thread = new WriterThread(
      { file: "/nonexistent/never-opened.db", busyTimeoutMs: BUSY_TIMEOUT_MS },
      () =>
        new Worker(
          `const { parentPort } = require("node:worker_threads");
           parentPort.on("message", (m) => {
             if (m.kind === "close") return process.exit(0);
             parentPort.postMessage({ id: m.id, results: m.jobs.map(() =>
               ({ ok: false, error: { message: "The database connection is not open", typeError: true } })) });
           });`,
          { eval: true },
        ),
    );
    const [result] = await thread.commit([{ op: "reserve", args: reserveRequest() }]);
    expect(result?.ok).toBe(false);
    expect(result?.ok === false && result.error).toBeInstanceOf(TypeError);
    await thread.stop();
  });
});

/** Another process that takes the register's write lock (BEGIN IMMEDIATE) and holds it until released. */
async function holdWriteLock(file: string): Promise<ChildProcessWithoutNullStreams> {
  const script = `
    const db = require("better-sqlite3")(${JSON.stringify(file)});
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\\n");
    process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ["-e", script], { cwd: process.cwd() });
  const [chunk] = (await once(child.stdout, "data")) as [Buffer];
  expect(chunk.toString()).toBe("locked\n");
  return child;
}

async function release(holder: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = once(holder, "exit");
  holder.stdin.write("release\n");
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
}
