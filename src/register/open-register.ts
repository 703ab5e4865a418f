import { describeLocation, type RegisterLocation } from "../config/database-url.ts";
import { ConfigError } from "../config/load-config.ts";
import { type EventRegister, StorageUnavailableError } from "./port.ts";
import { migrateDatabase } from "./postgres/migrate.ts";
import { PostgresRegister } from "./postgres/postgres-register.ts";
import { migrateSqliteFile, SqliteRegister } from "./sqlite/sqlite-register.ts";

export interface OpenRegisterOptions {
  /**
   * PostgreSQL: connections in the pool (DATABASE_POOL_MAX). The deliverer
   * holds up to ONEC_MAX_CONCURRENCY of them for settles, plus one for claims;
   * each HTTP request takes one for a statement of about a millisecond, so ten
   * more serve thousands of requests a second and the driver queues the rest.
   */
  poolMax?: number;
}

/** The default pool: the deliverer's share plus room for the HTTP side (see OpenRegisterOptions). */
export function defaultPoolMax(onecMaxConcurrency: number): number {
  return onecMaxConcurrency + 10;
}

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
        return await PostgresRegister.open(location.url, { poolMax: options.poolMax ?? defaultPoolMax(4) });
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
