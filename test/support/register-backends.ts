import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { EventRegister } from "../../src/register/port.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { postgresForTests, type TestDatabase, truncateRegister } from "./postgres.ts";
import { tempDir } from "./temp.ts";

/**
 * One register backend as a conformance suite drives it:
 *   setup (beforeAll) → reset (beforeEach: empty storage) → open (an instance on it; call twice
 *   for two instances on one register) → closeAll (afterEach) → teardown (afterAll).
 */
export interface RegisterBackend {
  name: "sqlite" | "postgres";
  /** Whether its register offers a hit counter every instance shares (port.ts, HitCounter). */
  sharesCounters: boolean;
  setup(): Promise<void>;
  reset(): Promise<void>;
  open(): Promise<EventRegister>;
  closeAll(): Promise<void>;
  teardown(): Promise<void>;
  /** Rows of `table` for one event id, read with plain SQL past the port (attempts, replays). */
  rowCount(table: "delivery_attempts" | "event_replays", eventId: string): Promise<number>;
}

abstract class Tracked {
  readonly #open: EventRegister[] = [];
  protected track<R extends EventRegister>(register: R): R {
    this.#open.push(register);
    return register;
  }
  async closeAll(): Promise<void> {
    await Promise.all(this.#open.splice(0).map((r) => r.close()));
  }
}

export class SqliteBackend extends Tracked implements RegisterBackend {
  readonly name = "sqlite";
  readonly sharesCounters = false;
  #dirs: ReturnType<typeof tempDir>[] = [];
  #file = "";

  get file(): string {
    return this.#file;
  }
  async setup(): Promise<void> {}
  async reset(): Promise<void> {
    const dir = tempDir("gateway-register-");
    this.#dirs.push(dir);
    this.#file = join(dir.path, "register.db");
  }
  async open(): Promise<SqliteRegister> {
    return this.track(new SqliteRegister(this.#file));
  }
  async teardown(): Promise<void> {
    for (const dir of this.#dirs.splice(0)) dir.remove();
  }
  async rowCount(table: "delivery_attempts" | "event_replays", eventId: string): Promise<number> {
    const db = new Database(this.#file, { readonly: true });
    try {
      return (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE event_id = ?`).get(eventId) as { n: number }).n;
    } finally {
      db.close();
    }
  }
}

export class PostgresBackend extends Tracked implements RegisterBackend {
  readonly name = "postgres";
  readonly sharesCounters = true;
  #database: TestDatabase | undefined;

  get database(): TestDatabase {
    if (this.#database === undefined) throw new Error("PostgresBackend used before setup()");
    return this.#database;
  }
  async setup(): Promise<void> {
    // Without a server (only under PG_REQUIRED=1), reset() fails each test on its own, so each counts as failed.
    this.#database = await postgresForTests().database();
    if (this.#database === undefined) return;
    // Applies the migrations once; each test then only empties the tables.
    await (await PostgresRegister.open(this.#database.url, { poolMax: 2 })).close();
  }
  async reset(): Promise<void> {
    postgresForTests().require();
    await truncateRegister(this.database.sql);
  }
  /**
   * On node's clock: the conformance cases state times explicitly (T0 + n) to
   * stage leases and backoff. The database's clock, the production default,
   * has its own cases in postgres-register.test.ts.
   */
  async open(): Promise<PostgresRegister> {
    return this.track(await PostgresRegister.open(this.database.url, { poolMax: 10, clock: "node" }));
  }
  async rowCount(table: "delivery_attempts" | "event_replays", eventId: string): Promise<number> {
    const rows = await this.database.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM ${this.database.sql(table)} WHERE event_id = ${eventId}`;
    return Number(rows[0]?.n ?? 0);
  }
  async teardown(): Promise<void> {
    await this.closeAll();
    await this.#database?.drop();
    this.#database = undefined;
  }
}

/**
 * SQLite always; PostgreSQL when its server answers, or (PG_REQUIRED=1) always,
 * failing when it does not. Locally a missing server skips it (the run says so once).
 */
export function registerBackends(): RegisterBackend[] {
  return postgresForTests().enabled ? [new SqliteBackend(), new PostgresBackend()] : [new SqliteBackend()];
}

/**
 * The hooks of a conformance suite on `backend`: a fresh register before each
 * test, handed to `opened`, and closed after it.
 */
export function registerPerTest(backend: RegisterBackend, opened: (register: EventRegister) => void): void {
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(async () => {
    await backend.reset();
    opened(await backend.open());
  });
  afterEach(() => backend.closeAll());
}
