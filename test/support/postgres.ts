import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { inject } from "vitest";

/**
 * The PostgreSQL server the tests use: PG_TEST_URL, or the CI machine's
 * 127.0.0.1:5432 as user postgres. Each test file gets its own database,
 * created and dropped here, so runs never see each other's rows.
 */
export const PG_SERVER_URL = process.env.PG_TEST_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** In CI (.ci/run sets PG_REQUIRED=1) a missing server fails the PostgreSQL tests instead of skipping them. */
export const PG_REQUIRED = process.env.PG_REQUIRED === "1";

const SKIP_LINE =
  "PostgreSQL tests skipped: no server at PG_TEST_URL (default postgres://postgres@127.0.0.1:5432/postgres); start one, or set PG_REQUIRED=1 to make its absence fail";

export type PostgresAvailability = { available: true } | { available: false; reason: string };

/**
 * Whether the server answers; says in one line that the PostgreSQL tests are
 * skipped when not. Run once per test run by postgres-global-setup.ts.
 */
export async function probePostgres(): Promise<PostgresAvailability> {
  const sql = postgres(PG_SERVER_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return { available: true };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (!PG_REQUIRED) console.warn(SKIP_LINE);
    return { available: false, reason };
  } finally {
    await sql.end({ timeout: 0 });
  }
}

export interface TestDatabase {
  url: string;
  /** A superuser connection to it, for checks below the port. */
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/** A new, empty database with a random name; drop() removes it even with connections still open. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `gateway_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(PG_SERVER_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 1 });
  }
  const url = new URL(PG_SERVER_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  return {
    url: url.toString(),
    sql,
    drop: async () => {
      await sql.end({ timeout: 1 });
      const dropper = postgres(PG_SERVER_URL, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await dropper.end({ timeout: 1 });
      }
    },
  };
}

/** What a test file needs to know, from the run's one probe. */
export function postgresForTests() {
  const availability = inject("postgres");
  return {
    /** Whether PostgreSQL tests run at all: with a server, or under PG_REQUIRED=1 (where they then fail). */
    enabled: availability.available || PG_REQUIRED,
    /** Throws, failing the calling test, when the server is missing. */
    require(): void {
      if (!availability.available) {
        throw new Error(`PG_REQUIRED=1 but PostgreSQL at ${PG_SERVER_URL} is unavailable: ${availability.reason}`);
      }
    },
    /** A fresh database for this file, or undefined without a server. */
    async database(): Promise<TestDatabase | undefined> {
      return availability.available ? createTestDatabase() : undefined;
    },
  };
}

/** Empties the register's tables between tests; the schema and its migrations stay. */
export async function truncateRegister(sql: postgres.Sql): Promise<void> {
  await sql`TRUNCATE inbound_events, delivery_attempts, event_replays, console_sessions, source_deliveries`;
}
