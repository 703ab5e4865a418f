import { StorageUnavailableError } from "../port.ts";

/**
 * Errors that mean "the register cannot record now, try later" rather than a
 * bug: the server unreachable or gone, shutting down, out of resources, a
 * standby, a statement cancelled. Anything else (a constraint, bad SQL)
 * stays what it is.
 */
const NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  // The driver's own: the connection broke or never came up in time.
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
]);

/** SQLSTATEs by class or exact code. */
function unavailableState(code: string): boolean {
  return (
    code.startsWith("08") || // connection exception
    code.startsWith("53") || // insufficient resources: disk full, out of memory, too many connections
    code.startsWith("57P") || // admin_shutdown, crash_shutdown, cannot_connect_now
    code === "57014" || // query_canceled (statement_timeout)
    code === "25006" || // read_only_sql_transaction: a standby
    code === "40001" || // serialization_failure
    code === "40P01" // deadlock_detected: one side is rolled back, nothing of it recorded
  );
}

/**
 * The connection, or the server, is gone: refused, reset, timed out, closed,
 * or the server shutting down, crashed or not yet accepting. Not a statement
 * the server refused while up (disk full, a standby, a deadlock): those leave
 * the connection usable.
 */
export function connectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string") return false;
  return NODE_CODES.has(code) || code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03";
}

export function asStorageError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof StorageUnavailableError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return error;
  if (NODE_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && unavailableState(code))) {
    return new StorageUnavailableError(`PostgreSQL: ${error.message}`, { cause: error });
  }
  return error;
}

/** Runs `work`, translating "cannot record now" into StorageUnavailableError. */
export async function storage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStorageError(error);
  }
}
