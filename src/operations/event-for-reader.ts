import type { Principal } from "../config/operators.ts";
import type { AttemptRecord, EventRecord } from "../register/port.ts";
import { maskedAttempt, maskedRecord, maskPersonalData } from "../views/mask-personal-data.ts";
import { allowed } from "./authorization.ts";

/** An event as one reader may see it, on the console's pages and in the admin API alike. */
export interface EventForReader {
  record: EventRecord;
  attempts: AttemptRecord[];
  /** The accepted body, parsed. */
  body: unknown;
  /** True when personal data was masked (a viewer). */
  masked: boolean;
}

/**
 * Viewers match events to orders; reaching the customer is support's
 * business, not theirs. A reader who may not read personal data gets the
 * body's e-mail addresses and phones masked, and the e-mail addresses 1C's
 * texts quote (its error, the recorded answer, the attempts' detail).
 */
export function eventForReader(record: EventRecord, attempts: AttemptRecord[], reader: Principal): EventForReader {
  const body = JSON.parse(record.body) as unknown;
  if (allowed(reader.role, "personal-data.read")) return { record, attempts, body, masked: false };
  return {
    record: maskedRecord(record),
    attempts: attempts.map(maskedAttempt),
    body: maskPersonalData(body),
    masked: true,
  };
}

/** A list of events as `reader` may see it: 1C's texts masked for a viewer, as eventForReader does. */
export function recordsForReader(records: EventRecord[], reader: Principal): EventRecord[] {
  return allowed(reader.role, "personal-data.read") ? records : records.map(maskedRecord);
}
