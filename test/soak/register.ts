import Database from "better-sqlite3";

/** One event as the register holds it: the gateway's own account of what became of it. */
export interface RegisterRow {
  readonly eventId: string;
  readonly status: string;
  readonly orderId: string | null;
  readonly orderNumber: string | null;
  readonly responseStatus: number | null;
  readonly responseBody: string | null;
  readonly lastErrorClass: string | null;
  readonly attempts: number;
  readonly finishedAttempts: number;
}

/**
 * The gateways' SQLite file, opened read-only beside them: the backlog
 * (events still pending) can only be seen here or by polling every status URL.
 */
export class RegisterReader {
  readonly #db: Database.Database;
  readonly #pending: Database.Statement<[string], { n: number }>;
  readonly #rows: Database.Statement<[string], RegisterRow>;

  constructor(path: string) {
    this.#db = new Database(path, { readonly: true, fileMustExist: true });
    this.#pending = this.#db.prepare(
      "SELECT count(*) AS n FROM inbound_events WHERE sender = ? AND status IN ('PROCESSING','FAILED_RETRYABLE')",
    );
    this.#rows = this.#db.prepare(
      `SELECT event_id AS eventId, status, order_id AS orderId, order_number AS orderNumber,
              response_status AS responseStatus, response_body AS responseBody,
              last_error_class AS lastErrorClass, attempts, finished_attempts AS finishedAttempts
         FROM inbound_events WHERE sender = ?`,
    );
  }

  pending(sender: string): number {
    return this.#pending.get(sender)?.n ?? 0;
  }

  rows(sender: string): Map<string, RegisterRow> {
    return new Map(this.#rows.all(sender).map((row) => [row.eventId, row]));
  }

  close(): void {
    this.#db.close();
  }
}
