import type Database from "better-sqlite3";
import { movedSourceRow, recordedSourceRow, remapAuditValues, toSource } from "../rows.ts";
import type {
  MovedDelivery,
  RemapAudit,
  SourceDelivery,
  SourceDeliveryFilter,
  SourceDeliveryInput,
  SourceDeliveryLog,
} from "../source-port.ts";
import type { SessionStorage } from "./session-store.ts";
import { prepareSourceStatements, type SourceStatements } from "./source-statements.ts";

/**
 * The platforms' deliveries in the register's SQLite file: writes by group
 * commit on the writer (as the sessions' are), reads on this connection.
 */
export class SqliteSourceLog implements SourceDeliveryLog {
  readonly #sql: SourceStatements;
  readonly #storage: SessionStorage;

  constructor(db: Database.Database, storage: SessionStorage) {
    this.#sql = storage.read(() => prepareSourceStatements(db));
    this.#storage = storage;
  }

  async record(delivery: SourceDeliveryInput): Promise<SourceDelivery> {
    // Checked here: an error's class does not survive the way back from the writer thread.
    return toSource(await this.#storage.write("recordSource", recordedSourceRow(delivery)));
  }

  async find(id: number): Promise<SourceDelivery | undefined> {
    const row = this.#storage.read(() => this.#sql.select.get(id));
    return row === undefined ? undefined : toSource(row);
  }

  async ofEvent(sender: string, eventId: string): Promise<SourceDelivery | undefined> {
    const row = this.#storage.read(() => this.#sql.selectOfEvent.get(sender, eventId));
    return row === undefined ? undefined : toSource(row);
  }

  async list(filter: SourceDeliveryFilter): Promise<SourceDelivery[]> {
    return this.#storage.read(() => this.#sql.list(filter)).map(toSource);
  }

  markRemapped(id: number, eventId: string, now: number, audit: RemapAudit): Promise<boolean> {
    return this.#storage.write("markSourceRemapped", { id, eventId, now, ...remapAuditValues(audit) });
  }

  purge(request: { olderThan: number; batchSize: number }): Promise<number> {
    return this.#storage.write("purgeSources", { olderThan: request.olderThan, batchSize: request.batchSize });
  }

  async exportPage(request: { afterId: number; limit: number }): Promise<SourceDelivery[]> {
    return this.#storage.read(() => this.#sql.exportPage.all(request)).map(toSource);
  }

  async importDelivery(delivery: MovedDelivery): Promise<"imported" | "present"> {
    // Checked here, as record's: an error's class does not survive the way back from the writer thread.
    const row = movedSourceRow(delivery);
    return (await this.#storage.write("importSource", row)) ? "imported" : "present";
  }
}
