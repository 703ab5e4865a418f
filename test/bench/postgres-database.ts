import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { describeLocation } from "../../src/config/database-url.ts";
import { databaseOn } from "../soak/database.ts";

/** The server the PostgreSQL scenarios create their databases on (BENCH_PG_URL). */
export const DEFAULT_BENCH_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/** A database of the bench's own, empty when made. */
export interface BenchDatabase {
  readonly url: string;
  /** The database's name, for pg_stat_activity. */
  readonly name: string;
  drop(): Promise<void>;
}

/** Every database made and not yet dropped, so that a failure or Ctrl-C anywhere still removes them. */
const created = new Map<string, BenchDatabase>();

/** Undefined when the server answers; otherwise why not, in one line. */
export async function unreachable(server: string): Promise<string | undefined> {
  try {
    await onServer(server, (sql) => sql`SELECT 1`);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A new database with a random name, so that a run never sees, and its drop never touches, anyone's data. */
export async function createBenchDatabase(server: string): Promise<BenchDatabase> {
  const name = `gateway_bench_${randomBytes(6).toString("hex")}`;
  await onServer(server, (sql) => sql.unsafe(`CREATE DATABASE "${name}"`));
  const database: BenchDatabase = {
    url: databaseOn(server, name),
    name,
    drop: async () => {
      created.delete(name);
      // FORCE: a gateway stopped by SIGKILL may leave a session the server has not reaped yet.
      await onServer(server, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
  created.set(name, database);
  return database;
}

export async function dropAllBenchDatabases(): Promise<void> {
  await Promise.all([...created.values()].map((database) => database.drop()));
}

/** The server for humans: its URL without a password. */
export function describeServer(server: string): string {
  return describeLocation({ kind: "postgres", url: server });
}

/** One statement on the database the server URL names, on a connection of its own. */
function onServer<T>(server: string, statement: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(server, { max: 1, connect_timeout: 3, onnotice: () => {} });
  return statement(sql).finally(() => sql.end({ timeout: 1 }));
}
