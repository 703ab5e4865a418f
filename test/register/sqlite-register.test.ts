import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { reserveRequest } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

/** What only the SQLite backend has: its pragmas and its file lock. The contract is in register.test.ts. */

describe("SqliteRegister", () => {
  let dir: ReturnType<typeof tempDir>;
  let register: SqliteRegister;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, "register.db");
    register = new SqliteRegister(file);
  });
  afterEach(async () => {
    await register.close();
    dir.remove();
  });

  it("runs in WAL mode with synchronous=FULL, at the latest schema version", () => {
    expect(register.durability()).toEqual({ journalMode: "wal", synchronous: "FULL" });
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it("reports a write lock held past the busy timeout as StorageUnavailableError", async () => {
    const impatient = new SqliteRegister(file, { busyTimeoutMs: 50 });
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    try {
      await expect(impatient.reserve(reserveRequest({ eventId: "evt-locked" }))).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect((await impatient.reserve(reserveRequest({ eventId: "evt-locked" }))).outcome).toBe("created");
    await impatient.close();
  });
});
