import { SENDER_ID_PATTERN } from "../../config/senders.ts";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import type { PageCursor } from "../../register/port.ts";
import { ConsoleError } from "./console-error.ts";
import { parseUtcInput, utcInputValue } from "./time-text.ts";

/** What the events list shows: filters, and where the page starts (newest first, keyset-paginated). */
export interface ListQuery {
  status?: EventStatus | undefined;
  sender?: string | undefined;
  /** received_at bounds, inclusive, epoch ms. */
  since?: number | undefined;
  until?: number | undefined;
  /** The next page starts strictly before this event ("Older"). */
  before?: PageCursor | undefined;
}

/** The query string the list reads; the "Older" link writes the cursor as three plain parameters. */
export function parseListQuery(query: unknown): ListQuery {
  const fields = singleValues(query);
  const before = parseCursor(fields);
  return {
    status: parseStatus(fields.status),
    sender: parseSender(fields.sender),
    since: parseTime("since", fields.since),
    until: parseTime("until", fields.until),
    before,
  };
}

/** The filters as query parameters: for tabs, links and the "Older" cursor. */
export function listQueryParams(query: ListQuery): Record<string, string | undefined> {
  return {
    status: query.status,
    sender: query.sender,
    since: query.since === undefined ? undefined : utcInputValue(query.since),
    until: query.until === undefined ? undefined : utcInputValue(query.until),
  };
}

export function cursorParams(cursor: PageCursor): Record<string, string> {
  return {
    before_received: String(cursor.receivedAt),
    before_sender: cursor.sender,
    before_event: cursor.eventId,
  };
}

export function parseStatus(value: string | undefined): EventStatus | undefined {
  if (value === undefined || value === "") return undefined;
  const status = ALL_STATUSES.find((candidate) => candidate === value);
  if (status === undefined) throw badQuery(`status must be one of ${ALL_STATUSES.join(", ")}`);
  return status;
}

export function parseSender(value: string | undefined): string | undefined {
  const sender = value?.trim();
  if (sender === undefined || sender === "") return undefined;
  if (!SENDER_ID_PATTERN.test(sender)) throw badQuery("a sender is 1-64 of A-Z a-z 0-9 . _ -");
  return sender;
}

export function parseTime(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const ms = parseUtcInput(value);
  if (ms === undefined) throw badQuery(`${name} is not a date and time; write it as 2026-11-30T10:00 (UTC)`);
  return ms;
}

function parseCursor(fields: Record<string, string | undefined>): PageCursor | undefined {
  const { before_received: at, before_sender: sender, before_event: eventId } = fields;
  if (at === undefined && sender === undefined && eventId === undefined) return undefined;
  const receivedAt = Number(at);
  if (
    !/^\d{1,15}$/.test(at ?? "") ||
    sender === undefined ||
    !SENDER_ID_PATTERN.test(sender) ||
    !isValidEventId(eventId)
  ) {
    throw badQuery('the "Older" link is damaged; start again from the newest events');
  }
  return { receivedAt, sender, eventId };
}

/**
 * A query string's fields, each once. A repeated parameter (`?status=A&status=B`)
 * is refused rather than one copy picked.
 */
export function singleValues(query: unknown): Record<string, string | undefined> {
  const fields: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (typeof value !== "string") throw badQuery(`the parameter "${name}" was sent more than once`);
    fields[name] = value;
  }
  return fields;
}

function badQuery(detail: string): ConsoleError {
  return new ConsoleError(400, "Bad request", detail);
}
