import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReadBatcher } from "../../src/register/sqlite/read-batcher.ts";
import type { WriteBatcher } from "../../src/register/write-batcher.ts";
import { closureBatcher, type Work } from "../support/closure-batcher.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The reads of one event-loop turn share one read transaction (issue 13: a
 * repeat is answered from a read, and one autocommit SELECT per request costs
 * more in locking than in reading). A read transaction in WAL mode is one
 * snapshot and takes no write lock.
 */
describe("ReadBatcher", () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database.Database;
  let other: Database.Database;

  beforeEach(() => {
    dir = tempDir();
    const file = join(dir.path, "reads.db");
    db = new Database(file, { timeout: 50 });
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY)");
    db.exec("INSERT INTO t (n) VALUES (1)");
    other = new Database(file, { timeout: 50 });
  });
  afterEach(() => {
    other.close();
    if (db.open) db.close();
    dir.remove();
  });

  const count = (connection: Database.Database) =>
    (connection.prepare("SELECT count(*) AS c FROM t").get() as { c: number }).c;

  it("runs the reads of one turn in one snapshot: a commit between two of them is seen by neither", async () => {
    const reads = new ReadBatcher(db);
    const seen = await Promise.all([
      reads.submit(() => {
        const before = count(db);
        other.exec("INSERT INTO t (n) VALUES (2)"); // committed by another connection mid-batch
        return before;
      }),
      reads.submit(() => count(db)),
    ]);
    expect(seen).toEqual([1, 1]);
    // The next turn's batch is a new snapshot.
    expect(await reads.submit(() => count(db))).toBe(2);
  });

  it("reads while another connection holds the write lock, without waiting for it", async () => {
    const reads = new ReadBatcher(db);
    other.exec("BEGIN IMMEDIATE");
    other.exec("INSERT INTO t (n) VALUES (3)");
    try {
      // The connection's busy timeout is 50 ms: a read that needed the lock would fail with SQLITE_BUSY,
      // which the value check catches. The time bound is only a guard against a read held up far longer
      // by some other path (room left for a loaded machine); it is not what tells the busy error.
      const started = performance.now();
      expect(await reads.submit(() => count(db))).toBe(1);
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      other.exec("ROLLBACK");
    }
  });

  it("rejects a failing read alone; the rest of its batch is answered", async () => {
    const reads = new ReadBatcher(db);
    const results = await Promise.allSettled([
      reads.submit(() => count(db)),
      reads.submit(() => db.prepare("SELECT * FROM no_such_table").get()),
      reads.submit(() => count(db)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(db.inTransaction).toBe(false);
  });

  it("with WriteBatcher.flushQueued as `then`, commits a write that follows a read in the read's own turn", async () => {
    /** Rows another connection sees at the start of the turn after the read's batch. */
    const seenNextTurn = async (reads: ReadBatcher, writes: WriteBatcher<Work>, n: number): Promise<number> => {
      let seen = -1;
      await reads
        .submit(() => {
          // Queued from inside the batch: runs first thing in the next turn.
          setImmediate(() => {
            seen = count(other);
          });
          return count(db);
        })
        .then(() => writes.submit(() => db.prepare("INSERT INTO t (n) VALUES (?)").run(n)));
      await new Promise((resolve) => setImmediate(resolve));
      return seen;
    };
    const writes = closureBatcher(db);
    // Without it, the write commits a turn later (a new event's answer waits one more commit).
    expect(await seenNextTurn(new ReadBatcher(db), writes, 10)).toBe(1);
    expect(await seenNextTurn(new ReadBatcher(db, () => writes.flushQueued()), writes, 11)).toBe(3);
  });

  it("rejects every read of a batch when the connection is closed", async () => {
    const reads = new ReadBatcher(db);
    const pending = [reads.submit(() => count(db)), reads.submit(() => count(db))];
    db.close();
    const results = await Promise.allSettled(pending);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
