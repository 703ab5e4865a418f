import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { readMigrations } from "../../src/register/migrations.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { reserveRequest, T0 } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Issue 22: "The same migration numbering on both backends." SQLite numbered
 * its own steps 1, 2, 3 in PRAGMA user_version; they are now 0001, 0003 and
 * 0004, as on PostgreSQL (0002 holds nothing on SQLite). A file the earlier
 * code migrated ran exactly these files' SQL and set user_version to its own
 * number: made here that way, it must open, keep its events and get only
 * what it lacks.
 */
describe("a SQLite register migrated under the earlier numbering", () => {
  const dir = tempDir("gateway-legacy-");
  afterAll(() => dir.remove());
  const byName = new Map(readMigrations("sqlite").map((m) => [m.name, m.sql]));
  const earlier = [
    ["0001_register"],
    ["0001_register", "0003_console"],
    ["0001_register", "0003_console", "0004_console_sessions"],
  ];

  it.each([1, 2, 3])("opens at user_version %i with its events, and records every version", async (version) => {
    const file = join(dir.path, `v${version}.db`);
    const legacy = new Database(file);
    for (const name of earlier[version - 1] ?? []) legacy.exec(byName.get(name) ?? "");
    legacy.pragma(`user_version = ${version}`);
    legacy
      .prepare(`INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                            round_started_at, next_attempt_at, received_at, updated_at)
                VALUES ('default', 'evt-old', 'fp', 'v1', 'PROCESSING', 'c-old', '{"order":{"id":"A-1"}}', 1, 1, 1, 1)`)
      .run();
    legacy.close();

    const register = new SqliteRegister(file);
    try {
      expect(await register.find("default", "evt-old")).toMatchObject({ status: "PROCESSING", correlationId: "c-old" });
      expect((await register.search("A-1", 10)).map((r) => r.eventId)).toEqual(["evt-old"]);
      expect((await register.reserve(reserveRequest({ eventId: "evt-new", now: T0 }))).outcome).toBe("created");
      const session = {
        idDigest: "d",
        operator: "anna",
        credentialDigest: "c",
        csrfToken: "t",
        idleMs: 1000,
        maxMs: 5000,
      };
      expect(await register.sessions.create(session, T0)).toMatchObject({ idDigest: "d", expiresAt: T0 + 5000 });
    } finally {
      await register.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      const recorded = db.prepare("SELECT version FROM register_migrations ORDER BY version").pluck().all();
      // Every version shipped, whatever later migrations add.
      const shipped = readMigrations("sqlite").map((m) => m.version);
      expect(recorded).toEqual(shipped);
      expect(recorded.slice(0, 6)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(db.pragma("user_version", { simple: true })).toBe(shipped.at(-1));
    } finally {
      db.close();
    }
  });
});
