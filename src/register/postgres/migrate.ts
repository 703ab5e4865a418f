import postgres from "postgres";
import { type Migration, readMigrations } from "../migrations.ts";
import { storage } from "./storage-errors.ts";

/** How long a migration's statement waits for a table's lock, in ms. */
const MIGRATION_LOCK_WAIT_MS = 5000;

/** Any fixed number: every gateway on one database must take the same lock. */
export const MIGRATION_LOCK_KEY = 4_107_342_001;

/**
 * Applies the migrations this database lacks, all in one transaction under an
 * advisory lock: several instances start at once, the first migrates, the
 * others wait on the lock and then find every version recorded. DDL is
 * transactional in PostgreSQL, so a failed migration leaves nothing behind.
 * Returns the versions applied now.
 */
export async function migrate<Types extends Record<string, unknown>>(
  sql: postgres.Sql<Types>,
  migrations: readonly Migration[] = readMigrations("postgres"),
): Promise<number[]> {
  return sql.begin(async (tx) => {
    // Another instance may be migrating: wait for it as long as it takes. Nor is a migration's statement
    // bounded by the pool's statement_timeout (the request deadline: postgres-register.ts, openPool).
    await tx`SET LOCAL lock_timeout = 0`;
    await tx`SET LOCAL statement_timeout = 0`;
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    // But not for a table's lock: a migration queued behind a reader (an export, a psql session) would
    // queue every running instance's statements behind it. It fails instead, and the start is tried again.
    await tx.unsafe(`SET LOCAL lock_timeout = ${MIGRATION_LOCK_WAIT_MS}`);
    await tx`CREATE TABLE IF NOT EXISTS register_migrations (
               version    integer PRIMARY KEY,
               name       text NOT NULL,
               applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set(
      (await tx<{ version: number }[]>`SELECT version FROM register_migrations`).map((r) => r.version),
    );
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      // A whole file in one simple-protocol round trip: it holds several statements.
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO register_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
      applied.push(migration.version);
    }
    return applied;
  });
}

/** `gateway migrate` on PostgreSQL: one connection, the same lock and transaction as at start; the names applied now. */
export async function migrateDatabase(url: string): Promise<string[]> {
  // No array-type query on connect: its failure would be unhandled (array-literal.ts).
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {}, fetch_types: false });
  try {
    const migrations = readMigrations("postgres");
    const applied = new Set(await storage(() => migrate(sql, migrations)));
    return migrations.filter((migration) => applied.has(migration.version)).map((migration) => migration.name);
  } finally {
    await sql.end({ timeout: 1 });
  }
}
