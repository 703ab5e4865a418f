import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openConnection } from "../../src/register/sqlite/open-connection.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Two gateways starting at once on a new SQLite file race to turn it into WAL, and the loser can get
 * SQLITE_BUSY without SQLite's busy handler being called (seen in CI: "cannot open the register:
 * database is locked"). The opening is retried while busy, within the busy timeout.
 */
const dir = tempDir("open-connection-");
afterAll(() => dir.remove());

describe("openConnection", () => {
  it("opens in WAL with an fsync per commit, foreign keys on and savepoint journals in memory", () => {
    const db = openConnection(`${dir.path}/wal.db`, 1000);
    // SQLite's numbering: synchronous 2 = FULL; temp_store 2 = MEMORY (1 = FILE, SQLite's default build).
    expect([
      db.pragma("journal_mode", { simple: true }),
      db.pragma("synchronous", { simple: true }),
      db.pragma("foreign_keys", { simple: true }),
      db.pragma("temp_store", { simple: true }),
    ]).toEqual(["wal", 2, 1, 2]);
    db.close();
  });

  it("tries again while SQLite says busy, and opens once it is not", () => {
    let tries = 0;
    const db = openConnection(`${dir.path}/busy.db`, 2000, () => {
      tries += 1;
      if (tries < 3) throw new Database.SqliteError("database is locked", "SQLITE_BUSY");
    });
    expect(tries).toBe(3);
    db.close();
  });

  it("gives up after the busy timeout with SQLite's own error", () => {
    const started = Date.now();
    expect(() =>
      openConnection(`${dir.path}/stuck.db`, 200, () => {
        throw new Database.SqliteError("database is locked", "SQLITE_BUSY_RECOVERY");
      }),
    ).toThrow(/database is locked/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("throws anything but busy at once", () => {
    let tries = 0;
    expect(() =>
      openConnection(`${dir.path}/full.db`, 5000, () => {
        tries += 1;
        throw new Database.SqliteError("database or disk is full", "SQLITE_FULL");
      }),
    ).toThrow(/disk is full/);
    expect(tries).toBe(1);
  });
});
