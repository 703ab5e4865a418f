import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { batchTransaction } from "../../src/register/sqlite/batch-transaction.ts";
import { tempDir } from "../support/temp.ts";

/**
 * One batch, one transaction (src/register/sqlite/batch-transaction.ts): a
 * job that throws fails alone, but when SQLite has rolled the whole
 * transaction back under it (SQLITE_FULL or SQLITE_IOERR while spilling its
 * page cache, https://www.sqlite.org/lang_transaction.html "Response To
 * Errors Within A Transaction"), no later job may commit on its own.
 */

type Job = { insert: string } | { fail: "alone" | "with-the-transaction" };

describe("a batch's transaction on a SQLite file", () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database.Database;
  let commit: (jobs: readonly Job[]) => ReturnType<ReturnType<typeof batchTransaction<Job>>>;

  beforeEach(() => {
    dir = tempDir("batch-transaction-");
    db = new Database(join(dir.path, "batch.db"));
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE rows (name TEXT PRIMARY KEY)");
    const insert = db.prepare("INSERT INTO rows (name) VALUES (?)");
    commit = batchTransaction(db, (job: Job) => {
      if ("insert" in job) return insert.run(job.insert).changes;
      // What SQLite does on its own after such an error: the transaction is gone when the error reaches us.
      if (job.fail === "with-the-transaction") db.exec("ROLLBACK");
      throw new Error(`job failed ${job.fail}`);
    });
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  /** What another connection sees: only what was committed. */
  function committed(): string[] {
    const reader = new Database(join(dir.path, "batch.db"), { readonly: true });
    try {
      return (reader.prepare("SELECT name FROM rows ORDER BY name").all() as { name: string }[]).map((row) => row.name);
    } finally {
      reader.close();
    }
  }

  it("fails a job that throws alone, and commits the others", () => {
    const results = commit([{ insert: "a" }, { fail: "alone" }, { insert: "c" }]);
    expect(results.map((result) => result.ok)).toEqual([true, false, true]);
    expect(committed()).toEqual(["a", "c"]);
  });

  it("fails the whole batch when the transaction was rolled back under a job: nothing after it commits apart", () => {
    expect(() => commit([{ insert: "a" }, { fail: "with-the-transaction" }, { insert: "c" }])).toThrow(
      "job failed with-the-transaction",
    );
    expect(committed()).toEqual([]);
    expect(db.inTransaction).toBe(false);
  });
});
