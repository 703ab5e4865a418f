import Database from "better-sqlite3";
import postgres from "postgres";
import type { RegisterLocation } from "../../src/config/database-url.ts";
import { type RegisterReader, type RegisterRow, registerQueries, rowsByEventId } from "./register.ts";

/** A reader of the register at `location`, whichever backend the gateways use there. */
export function openRegisterReader(location: RegisterLocation): RegisterReader {
  return location.kind === "sqlite"
    ? new SqliteRegisterReader(location.path)
    : new PostgresRegisterReader(location.url);
}

/** The gateways' SQLite file, opened read-only: the soak must never be one more writer. */
class SqliteRegisterReader implements RegisterReader {
  readonly #db: Database.Database;
  readonly #pending: Database.Statement<[string], { n: number }>;
  readonly #rows: Database.Statement<[string], RegisterRow>;

  constructor(path: string) {
    this.#db = new Database(path, { readonly: true, fileMustExist: true });
    const queries = registerQueries("?");
    this.#pending = this.#db.prepare(queries.pending);
    this.#rows = this.#db.prepare(queries.rows);
  }

  async pending(sender: string): Promise<number> {
    return this.#pending.get(sender)?.n ?? 0;
  }

  async rows(sender: string): Promise<Map<string, RegisterRow>> {
    return rowsByEventId(this.#rows.all(sender));
  }

  async close(): Promise<void> {
    this.#db.close();
  }
}

/** One connection to the gateways' database, read-only by session default for the same reason. */
class PostgresRegisterReader implements RegisterReader {
  readonly #sql: postgres.Sql;
  readonly #queries = registerQueries("$1");

  constructor(url: string) {
    this.#sql = postgres(url, {
      max: 1,
      connect_timeout: 5,
      onnotice: () => {},
      connection: { application_name: "gateway-soak-reader", default_transaction_read_only: true },
    });
  }

  async pending(sender: string): Promise<number> {
    const [row] = await this.#sql.unsafe<{ n: number }[]>(this.#queries.pending, [sender]);
    return row?.n ?? 0;
  }

  async rows(sender: string): Promise<Map<string, RegisterRow>> {
    return rowsByEventId(await this.#sql.unsafe<RegisterRow[]>(this.#queries.rows, [sender]));
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 1 });
  }
}
