import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JobResult, WriteBatcher } from "../../src/register/write-batcher.ts";
import { closureBatcher } from "../support/closure-batcher.ts";
import { tempDir } from "../support/temp.ts";

describe("WriteBatcher (group commit), on one connection", () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  let db: Database.Database;
  let reader: Database.Database;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, "batch.db");
    db = new Database(file, { timeout: 50 });
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY)");
    reader = new Database(file, { readonly: true });
  });
  afterEach(() => {
    reader.close();
    db.close();
    dir.remove();
  });

  const committedRows = () => (reader.prepare("SELECT count(*) AS c FROM t").get() as { c: number }).c;

  it("commits the writes of one event-loop turn together, and answers only after the commit", async () => {
    const batcher = closureBatcher(db);
    const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
    const seenByReader: number[] = [];
    const writes = Array.from({ length: 100 }, (_, n) =>
      batcher.submit(() => {
        // Another connection sees only committed rows: inside one batch, none of its siblings yet.
        seenByReader.push(committedRows());
        return insert.run(n).changes;
      }),
    );
    expect(committedRows()).toBe(0);
    expect(await Promise.all(writes)).toEqual(writes.map(() => 1));
    expect(new Set(seenByReader)).toEqual(new Set([0]));
    expect(committedRows()).toBe(100);
  });

  it("undoes and rejects a failing write alone; its batch commits the rest", async () => {
    const batcher = closureBatcher(db);
    const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
    const results = await Promise.allSettled([
      batcher.submit(() => insert.run(1)),
      batcher.submit(() => {
        insert.run(2);
        insert.run(1); // primary key clash: this job's own insert of 2 must go too
      }),
      batcher.submit(() => insert.run(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((reader.prepare("SELECT n FROM t ORDER BY n").all() as Array<{ n: number }>).map((r) => r.n)).toEqual([
      1, 3,
    ]);
  });

  it("rejects every write of a batch that cannot begin, and writes nothing", async () => {
    const batcher = closureBatcher(db);
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    try {
      const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
      const results = await Promise.allSettled([
        batcher.submit(() => insert.run(1)),
        batcher.submit(() => insert.run(2)),
      ]);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
      expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect(committedRows()).toBe(0);
  });

  it("splits a flood into batches of at most maxBatch", async () => {
    const batcher = closureBatcher(db, 10);
    const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 25 }, (_, n) =>
        batcher.submit(() => {
          seen.push(committedRows());
          insert.run(n);
        }),
      ),
    );
    expect([...new Set(seen)]).toEqual([0, 10, 20]);
  });
});

describe("WriteBatcher with an asynchronous commit (the writer thread's)", () => {
  /** A commit whose batches end when the test says so, in the order they were sent. */
  function controlledCommit() {
    const sent: number[][] = [];
    const pending: Array<() => void> = [];
    const commit = (jobs: readonly number[]) => {
      sent.push([...jobs]);
      return new Promise<JobResult[]>((resolve) => {
        pending.push(() => resolve(jobs.map((job) => ({ ok: true, value: job * 10 }))));
      });
    };
    const endOldest = () => pending.shift()?.();
    return { sent, commit, endOldest };
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it("keeps at most maxInFlight batches out, and sends what gathered meanwhile as one batch when one ends", async () => {
    const { sent, commit, endOldest } = controlledCommit();
    const batcher = new WriteBatcher<number>(commit, 256, 2);
    const answers = [1, 2].map((job) => batcher.submit(job));
    await nextTurn();
    answers.push(batcher.submit(3));
    await nextTurn();
    answers.push(...[4, 5, 6].map((job) => batcher.submit(job)));
    await nextTurn();
    await nextTurn();
    // Two batches out; 4, 5 and 6 wait, whatever the turns.
    expect(sent).toEqual([[1, 2], [3]]);
    endOldest();
    expect(await Promise.all(answers.slice(0, 2))).toEqual([10, 20]);
    await nextTurn();
    expect(sent).toEqual([[1, 2], [3], [4, 5, 6]]);
    endOldest();
    endOldest();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it("with no bound on batches in flight (PostgreSQL's), sends all of a turn's batches at once", async () => {
    const { sent, commit, endOldest } = controlledCommit();
    const batcher = new WriteBatcher<number>(commit, 2, Infinity);
    const answers = [1, 2, 3, 4, 5].map((job) => batcher.submit(job));
    await nextTurn();
    expect(sent).toEqual([[1, 2], [3, 4], [5]]);
    endOldest();
    endOldest();
    endOldest();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50]);
  });

  it("rejects every job of a batch whose commit fails, and goes on with the next", async () => {
    let calls = 0;
    const batcher = new WriteBatcher<number>(async (jobs) => {
      calls++;
      if (calls === 1) throw new Error("disk full");
      return jobs.map((job) => ({ ok: true, value: job }));
    });
    const first = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(first.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(await batcher.submit(3)).toBe(3);
    await batcher.idle();
  });
});
