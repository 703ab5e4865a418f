import { randomBytes } from "node:crypto";
import { join } from "node:path";
import postgres from "postgres";
import { describeLocation, type RegisterLocation } from "../../src/config/database-url.ts";

/** Where the soak's gateways keep their one register, made fresh for this run. */
export interface SoakRegister {
  readonly location: RegisterLocation;
  /** The location for humans: a PostgreSQL URL without its password. */
  readonly description: string;
  /** Deletes the register: the PostgreSQL database; a SQLite file goes with the run's folder instead. */
  remove(): Promise<void>;
}

/** A SQLite file in the run's folder, or with `postgresServer` a new database of the soak's own there. */
export function createSoakRegister(dir: string, postgresServer: string | undefined): Promise<SoakRegister> {
  if (postgresServer === undefined) {
    const location: RegisterLocation = { kind: "sqlite", path: join(dir, "gateway.db") };
    return Promise.resolve({ location, description: location.path, remove: async () => {} });
  }
  return createSoakDatabase(postgresServer);
}

/**
 * A database with a random name on the server, so that a run never sees, and
 * its removal never touches, anyone's data, not even an earlier run's.
 */
async function createSoakDatabase(server: string): Promise<SoakRegister> {
  const name = `gateway_soak_${randomBytes(6).toString("hex")}`;
  await onServer(server, (sql) => sql.unsafe(`CREATE DATABASE "${name}"`));
  const location: RegisterLocation = { kind: "postgres", url: databaseOn(server, name) };
  return {
    location,
    description: describeLocation(location),
    // FORCE: a gateway killed at the wrong moment may leave a session the server has not reaped yet.
    remove: () => onServer(server, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

/** The server's URL naming `database` instead, everything else (user, password, host, parameters) kept. */
export function databaseOn(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

/** One statement on the database the server URL names, on a connection of its own. */
async function onServer(server: string, statement: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(server, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await statement(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}
