import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config/load-config.ts";

/**
 * Personal data and credentials never reach the log. Bodies are not logged at
 * all; these paths guard the places where a future line might carry them.
 */
const REDACT = [
  "req.headers.authorization",
  "headers.authorization",
  "*.customer.email",
  "*.customer.phone",
  "*.delivery.address",
  "onecPassword",
];

/**
 * Standard output, written as each line is logged (pino's `sync: true`). pino's
 * own default for stdout is asynchronous: lines wait in memory for a write in
 * libuv's pool, so the last ones before a crash or a SIGKILL were lost, the
 * very lines that say what happened. Under load it was also the dearer mode
 * here: each line logged while a write was out was appended to one growing
 * string that sonic-boom measured, and so copied, on every line (some 5 KB of
 * garbage per request with 50 in flight), and the pool's thread did the write.
 * A blocking write to a slow reader holds the event loop instead of growing
 * the heap without bound.
 */
function standardOutput(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

export function createLogger(level: LogLevel, destination: DestinationStream = standardOutput()): Logger {
  return pino(
    {
      level,
      base: { service: "onec-gateway" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: "[REDACTED]" },
    },
    destination,
  );
}
