import { hostname, userInfo } from "node:os";
import { SENDER_ID_PATTERN } from "../config/senders.ts";
import { InvalidValue, wholeNumber } from "../config/values.ts";
import { ALL_STATUSES, type EventStatus } from "../domain/event-status.ts";
import { REPLAY_REASON_MAX, REQUESTED_BY_MAX } from "../operations/replay-event.ts";
import { UsageError } from "./context.ts";

/** Runs a `node:util` parseArgs call, turning its complaints into a UsageError. */
export function parsing<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof TypeError && String((error as NodeJS.ErrnoException).code).startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError(error.message);
    }
    throw error;
  }
}

export function onePositional(positionals: readonly string[], name: string): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError(`<${name}> is required`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  return value;
}

export function noPositionals(positionals: readonly string[]): void {
  if (positionals[0] !== undefined) throw new UsageError(`unexpected argument "${positionals[0]}"`);
}

export function statusOption(raw: string | undefined): EventStatus {
  if (raw === undefined) throw new UsageError(`--status is required: one of ${ALL_STATUSES.join(", ")}`);
  const status = ALL_STATUSES.find((known) => known === raw.toUpperCase());
  if (status === undefined) {
    throw new UsageError(`--status must be one of ${ALL_STATUSES.join(", ")}, got "${raw}"`);
  }
  return status;
}

/**
 * An ISO 8601 date or date-time (e.g. 2026-11-30, 2026-11-30T10:00 or 2026-11-30T13:00:00+03:00), as
 * epoch ms. Without a zone it is UTC, a date-time as a bare date (which Date.parse reads as UTC, but a
 * date-time as local time): the console reads its bounds as UTC and the CLI prints UTC.
 */
export function timeOption(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const parts = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/.exec(raw);
  const [, date, time, zone] = parts ?? [];
  const ms = time === undefined ? Date.parse(date ?? "") : Date.parse(`${date}T${time}${utcOffset(zone)}`);
  if (Number.isNaN(ms)) {
    throw new UsageError(
      `--${flag} must be an ISO 8601 time such as 2026-11-30T10:00:00Z (UTC when no zone is given), got "${raw}"`,
    );
  }
  return ms;
}

/** Z for none; +0300 as +03:00, which Date.parse reads in every form. */
function utcOffset(zone: string | undefined): string {
  if (zone === undefined || zone === "Z") return "Z";
  return zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
}

export function integerOption(flag: string, raw: string | undefined, fallback: number, min: number, max: number) {
  if (raw === undefined) return fallback;
  return usage(() => wholeNumber(`--${flag}`, raw, min, max));
}

/** An operator's value that breaks its rule: the command's usage, exit 2. */
export function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidValue) throw new UsageError(error.message);
    throw error;
  }
}

/** Events per second; fractions allowed (0.5 = one every two seconds). */
export function rateOption(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value > 0 && value <= 10_000))
    throw new UsageError(`--rate must be a number above 0, up to 10000, got "${raw}"`);
  return value;
}

/** Same bounds as the admin API's replay body, so the audit trail looks the same whichever way it came. */
export function reasonOption(raw: string | undefined): string {
  const reason = raw?.trim() ?? "";
  if (reason === "") throw new UsageError('--reason "…" is required: it is written to the audit trail');
  if (reason.length > REPLAY_REASON_MAX)
    throw new UsageError(`--reason must be at most ${REPLAY_REASON_MAX} characters`);
  return reason;
}

export function requestedByOption(raw: string | undefined): string {
  const by = raw?.trim() || defaultRequester();
  if (by.length > REQUESTED_BY_MAX) throw new UsageError(`--by must be at most ${REQUESTED_BY_MAX} characters`);
  return by;
}

function defaultRequester(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): fall back to what the shell says.
    user = process.env.USER ?? "unknown";
  }
  return `${user}@${hostname()}`;
}

/** `--sender ID`: which sender's event, when several used one event_id; absent means any. */
export function senderOption(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!SENDER_ID_PATTERN.test(raw))
    throw new UsageError(`--sender must be a sender id (1-64 of A-Z a-z 0-9 . _ -), got "${raw}"`);
  return raw;
}
