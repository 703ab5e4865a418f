import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { readMigrations } from "../../src/register/migrations.ts";
import type { EventRegister } from "../../src/register/port.ts";
import { migrate } from "../../src/register/postgres/migrate.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Migration 0009 on a register that already holds events. On SQLite the
 * site's order id and number move from expressions over the body into
 * columns, so the events recorded before must be found by them afterwards;
 * and the table is rebuilt under a new primary key (event_id, sender):
 * dropping the old table must not take the attempts, replays and platform
 * deliveries that refer to it along (with foreign keys on, SQLite deletes
 * them first), and those references must hold afterwards as before. On
 * PostgreSQL 0009 holds nothing; its search must find them all the same.
 */

const event = orderPaidEvent((e) => {
  e.order.id = "A-77001";
  e.order.number = "77001";
});
const body = JSON.stringify(event);

/** The console's search finds the event, and it alone, by each term. */
async function expectFoundBy(register: EventRegister, terms: readonly string[]): Promise<void> {
  for (const term of terms) {
    expect(
      (await register.search(term, 10)).map((r) => r.eventId),
      term,
    ).toEqual([event.event_id]);
  }
}

describe("migration 0009 on a SQLite register with history", () => {
  const dir = tempDir("gateway-0009-");
  afterAll(() => dir.remove());

  /** A file as the gateway left it at 0008, holding one delivered event with everything that refers to it. */
  function fileAt0008(name: string): string {
    const file = join(dir.path, name);
    const db = new Database(file);
    db.pragma("foreign_keys = ON");
    const before = readMigrations("sqlite").filter((m) => m.version <= 8);
    for (const migration of before) db.exec(migration.sql);
    db.exec(`CREATE TABLE register_migrations (
               version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
    for (const { version, name: migration } of before) {
      db.prepare("INSERT INTO register_migrations VALUES (?, ?, 1)").run(version, migration);
    }
    db.prepare(`INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                  order_id, order_number, attempts, finished_attempts, round_attempts, round_started_at,
                  lease_token, received_at, updated_at)
                VALUES ('shop-a', ?, 'fp', 'v1', 'SUCCEEDED', 'corr-77001', ?, 'o-1', 'ЗК-1', 1, 1, 1, 1, 1, 1, 2)`).run(
      event.event_id,
      body,
    );
    db.prepare(`INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at, finished_at,
                  outcome, http_status, applied)
                VALUES ('shop-a', ?, 1, 1, 'w', 1, 2, 'delivered', 201, 1)`).run(event.event_id);
    db.prepare(`INSERT INTO event_replays (sender, event_id, requested_by, reason, forced, from_status, requested_at)
                VALUES ('shop-a', ?, 'anna', 'ticket 12', 0, 'FAILED_FINAL', 1)`).run(event.event_id);
    db.prepare(`INSERT INTO source_deliveries (sender, platform, key, outcome, event_id, ids, payload, correlation_id,
                  received_at)
                VALUES ('shop-a', 'shopify', ?, 'accepted', ?, '{}', '{"id":1}', 'corr-77001', 1)`).run(
      event.event_id,
      event.event_id,
    );
    db.close();
    return file;
  }

  it("keeps every event and what refers to it, and finds the event by the site's order id and number", async () => {
    const register = new SqliteRegister(fileAt0008("history.db"));
    try {
      expect(await register.find("shop-a", event.event_id)).toMatchObject({
        status: EventStatus.SUCCEEDED,
        body,
        order: { id: "o-1", number: "ЗК-1" },
      });
      expect(await register.listAttempts("shop-a", event.event_id)).toMatchObject([{ outcome: "delivered" }]);
      expect(await register.listReplays("shop-a", event.event_id)).toMatchObject([{ requestedBy: "anna" }]);
      expect(await register.sources.ofEvent("shop-a", event.event_id)).toMatchObject({ platform: "shopify" });
      await expectFoundBy(register, ["A-77001", "77001", event.event_id, "corr-77001", "o-1", "ЗК-1"]);
    } finally {
      await register.close();
    }
  });

  it("leaves the references in force: a purged event takes its attempts, replays and deliveries with it", async () => {
    const file = fileAt0008("cascade.db");
    await new SqliteRegister(file).close();
    const db = new Database(file);
    try {
      db.pragma("foreign_keys = ON");
      expect(() =>
        db
          .prepare(
            "INSERT INTO delivery_attempts (sender, event_id, attempt, lease_token, worker, started_at) VALUES ('shop-a', 'none', 1, 9, 'w', 1)",
          )
          .run(),
      ).toThrow(/FOREIGN KEY/);
      db.prepare("DELETE FROM inbound_events WHERE event_id = ?").run(event.event_id);
      for (const table of ["delivery_attempts", "event_replays", "source_deliveries"]) {
        expect(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(0);
      }
    } finally {
      db.close();
    }
  });

  it("keys the table by (event_id, sender), keeps no index of event_id alone, and indexes the site's keys as columns", async () => {
    const file = fileAt0008("keys.db");
    await new SqliteRegister(file).close();
    const db = new Database(file, { readonly: true });
    try {
      const indexes = db.pragma("index_list(inbound_events)") as { name: string; origin: string }[];
      const primary = indexes.find((index) => index.origin === "pk");
      expect(db.pragma(`index_info(${primary?.name})`)).toMatchObject([{ name: "event_id" }, { name: "sender" }]);
      expect(indexes.map((index) => index.name)).not.toContain("inbound_events_by_event_id");
      // Columns, not json_extract over the body (an expression's column has no name): no parse to index an event.
      for (const column of ["site_order_id", "site_order_number"]) {
        expect(db.pragma(`index_info(inbound_events_by_${column})`)).toMatchObject([{ name: column }]);
      }
    } finally {
      db.close();
    }
  });
});

const pg = postgresForTests();

describe.skipIf(!pg.enabled)("migration 0009 on a PostgreSQL register with history", () => {
  let db: TestDatabase | undefined;
  beforeEach(async () => {
    pg.require();
    db = await pg.database();
  });
  afterEach(async () => {
    await db?.drop();
  });

  it("finds an event recorded before it by the site's order id and number", async () => {
    if (db === undefined) throw new Error("no database");
    await migrate(
      db.sql,
      readMigrations("postgres").filter((m) => m.version <= 8),
    );
    await db.sql`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  round_started_at, received_at, updated_at)
      VALUES ('shop-a', ${event.event_id}, 'fp', 'v1', 'PROCESSING', 'corr-77001', ${body}, 1, 1, 1)`;
    const register = await PostgresRegister.open(db.url, { poolMax: 2, connectTimeoutSeconds: 2 });
    try {
      await expectFoundBy(register, ["A-77001", "77001"]);
    } finally {
      await register.close();
    }
  });
});
