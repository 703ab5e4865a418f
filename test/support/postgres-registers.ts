import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import type { ClockSource } from "../../src/register/postgres/statements.ts";
import type { postgresForTests, TestDatabase } from "./postgres.ts";

export interface PostgresRegisters {
  /** The test's database (set before the first test). */
  readonly db: TestDatabase;
  /** A register instance on the database with `clock`, closed after the test. */
  open(clock: ClockSource): Promise<PostgresRegister>;
  /** The database's `now()` in epoch milliseconds. */
  databaseNow(): Promise<number>;
}

/**
 * Register instances on one fresh database, as a describe's tests open them:
 * the schema comes with a first open, each test starts from empty `tables`,
 * and every instance a test opened is closed after it. For tests of whose
 * clock (the database's or the process's) stamps the register's times.
 */
export function postgresRegistersPerTest(
  pg: ReturnType<typeof postgresForTests>,
  tables: readonly string[],
): PostgresRegisters {
  let db: TestDatabase | undefined;
  const opened: PostgresRegister[] = [];
  const database = (): TestDatabase => {
    if (db === undefined) throw new Error("no PostgreSQL database for this test");
    return db;
  };
  const open = async (clock: ClockSource): Promise<PostgresRegister> => {
    const register = await PostgresRegister.open(database().url, { poolMax: 2, clock });
    opened.push(register);
    return register;
  };

  beforeAll(async () => {
    db = await pg.database();
  });
  beforeEach(async () => {
    pg.require();
    await (await open("database")).close();
    await database().sql.unsafe(`TRUNCATE ${tables.join(", ")}`);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((register) => register.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });

  return {
    get db() {
      return database();
    },
    open,
    async databaseNow() {
      const rows = await database().sql<{ now: string }[]>`SELECT (extract(epoch FROM now()) * 1000)::bigint AS now`;
      return Number(rows[0]?.now);
    },
  };
}
