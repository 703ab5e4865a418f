import { describeLocation, type RegisterLocation } from "../config/database-url.ts";
import { ConfigError } from "../config/load-config.ts";
import { type EventRegister, StorageUnavailableError } from "./port.ts";
import { migrateDatabase } from "./postgres/migrate.ts";
import { PostgresRegister } from "./postgres/postgres-register.ts";
import { migrateSqliteFile, SqliteRegister } from "./sqlite/sqlite-register.ts";

export interface OpenRegisterOptions {
  /** PostgreSQL: connections in the pool; servers pass DATABASE_POOL_MAX (config/load-config.ts says why). */
  poolMax?: number;
  /** PostgreSQL: whose clock stamps leases and due times (DATABASE_CLOCK); the database's unless set. */
  clock?: "database" | "node";
}

/** A tool's pool (the CLI, one statement at a time): servers always pass their own. */
const TOOL_POOL_MAX = 2;

/**
 * The one place that turns DATABASE_URL's location into a register; callers
 * see only the port. Async because PostgreSQL connects and migrates before it
 * is ready; SQLite opens (and migrates) synchronously as before.
 */
export async function openRegister(
  location: RegisterLocation,
  options: OpenRegisterOptions = {},
): Promise<EventRegister> {
  switch (location.kind) {
    case "sqlite":
      return new SqliteRegister(location.path);
    case "postgres":
      try {
        return await PostgresRegister.open(location.url, {
          poolMax: options.poolMax ?? TOOL_POOL_MAX,
          clock: options.clock ?? "database",
        });
      } catch (error) {
        // Unreachable is "try later"; a server that answers and refuses (no such role or database,
        // wrong password, no permission to migrate) is a setting to fix.
        if (error instanceof StorageUnavailableError || !(error instanceof Error)) throw error;
        throw new ConfigError(`DATABASE_URL: ${describeLocation(location)} refused: ${error.message}`, {
          cause: error,
        });
      }
  }
}

/**
 * Brings the register's schema up to date without opening it for work
 * (`gateway migrate`); returns the names of the migrations applied now, none
 * when it was already current. Servers do the same at start.
 */
export async function migrateRegister(location: RegisterLocation): Promise<string[]> {
  switch (location.kind) {
    case "sqlite":
      return migrateSqliteFile(location.path);
    case "postgres":
      return migrateDatabase(location.url);
  }
}
