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
 * The gateways' register, read beside them past their port: the backlog
 * (events still pending) can only be seen here or by polling every status URL.
 * register-readers.ts has one per backend.
 */
export interface RegisterReader {
  /** The sender's events still pending (PROCESSING or FAILED_RETRYABLE). */
  pending(sender: string): Promise<number>;
  rows(sender: string): Promise<Map<string, RegisterRow>>;
  close(): Promise<void>;
}

/**
 * Both backends' queries, identical but for the driver's placeholder for the
 * sender, so that the soak verifies the same thing on either. Aliases are
 * quoted because PostgreSQL folds unquoted ones to lower case; the count is
 * cast because PostgreSQL's is a bigint, which its driver hands over as a string.
 */
export function registerQueries(senderPlaceholder: string): { pending: string; rows: string } {
  return {
    pending: `SELECT CAST(count(*) AS INTEGER) AS "n" FROM inbound_events
               WHERE sender = ${senderPlaceholder} AND status IN ('PROCESSING','FAILED_RETRYABLE')`,
    rows: `SELECT event_id AS "eventId", status, order_id AS "orderId", order_number AS "orderNumber",
                  response_status AS "responseStatus", response_body AS "responseBody",
                  last_error_class AS "lastErrorClass", attempts, finished_attempts AS "finishedAttempts"
             FROM inbound_events WHERE sender = ${senderPlaceholder}`,
  };
}

export function rowsByEventId(rows: Iterable<RegisterRow>): Map<string, RegisterRow> {
  return new Map([...rows].map((row) => [row.eventId, row]));
}
