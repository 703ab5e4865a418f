import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config/load-config.ts";
import { TurnBatchedOutput } from "./turn-batched-output.ts";

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

/** One for the process: every logger on standard output shares its turn's write, lines in the order logged. */
let shared: TurnBatchedOutput | undefined;
function standardOutput(): TurnBatchedOutput {
  shared ??= new TurnBatchedOutput();
  return shared;
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
