import { SENDER_ID_PATTERN } from "../../config/senders.ts";
import { EventStatus } from "../../domain/event-status.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import { type ReplayOutcome, replayEvent } from "../../operations/replay-event.ts";
import type { EventRecord, EventRegister } from "../../register/port.ts";

/**
 * Bulk replay as the console does it: a selection (status, sender, window)
 * previewed as a dry run, then the previewed events, and only those, replayed
 * one by one through the same operation as a single replay.
 */

/** Events one bulk run takes, oldest first: a page support can read before confirming. */
export const BULK_REPLAY_MAX = 100;

/** What support replays in bulk: events that gave up, or that wait for their next retry. */
export const BULK_STATUSES = [EventStatus.FAILED_FINAL, EventStatus.FAILED_RETRYABLE] as const;
export type BulkStatus = (typeof BULK_STATUSES)[number];

export interface BulkSelection {
  status: BulkStatus;
  sender?: string | undefined;
  /** received_at bounds, inclusive, epoch ms. */
  since?: number | undefined;
  until?: number | undefined;
}

/** An event as the confirmation form carries it. */
export interface EventKey {
  sender: string;
  eventId: string;
}

/** The dry run: what a bulk replay of `selection` would take. Changes nothing. */
export function previewBulkReplay(register: EventRegister, selection: BulkSelection): Promise<EventRecord[]> {
  const { status, sender, since, until } = selection;
  return register.list({ status, sender, since, until, limit: BULK_REPLAY_MAX });
}

/**
 * The previewed events in one form field: `sender~event_id`, space-separated.
 * `~` and spaces are in neither alphabet, so the list reads back unambiguously.
 */
export function encodeEventKeys(records: readonly EventKey[]): string {
  return records.map((record) => `${record.sender}~${record.eventId}`).join(" ");
}

/** The list `encodeEventKeys` wrote; undefined if anything in it is not an event key, or there are too many. */
export function decodeEventKeys(text: string): EventKey[] | undefined {
  const parts = text.split(" ").filter((part) => part !== "");
  if (parts.length === 0 || parts.length > BULK_REPLAY_MAX) return undefined;
  const keys: EventKey[] = [];
  for (const part of parts) {
    const cut = part.indexOf("~");
    const sender = part.slice(0, cut);
    const eventId = part.slice(cut + 1);
    if (cut <= 0 || !SENDER_ID_PATTERN.test(sender) || !isValidEventId(eventId)) return undefined;
    keys.push({ sender, eventId });
  }
  return keys;
}

export interface BulkReplayLine extends EventKey {
  outcome: "replayed" | "missing" | "already succeeded" | "attempt running";
}

/**
 * Replays each event in turn, each in its own transaction: a failure half way
 * leaves the rest as they were. The deliverer takes them at its own pace
 * (ONEC_MAX_CONCURRENCY), so 1C gets no burst.
 */
export async function replayEach(
  register: EventRegister,
  keys: readonly EventKey[],
  request: { requestedBy: string; reason: string; now: () => number },
): Promise<BulkReplayLine[]> {
  const lines: BulkReplayLine[] = [];
  for (const key of keys) {
    const outcome = await replayEvent(register, {
      eventId: key.eventId,
      sender: key.sender,
      requestedBy: request.requestedBy,
      reason: request.reason,
      force: false,
      now: request.now(),
    });
    lines.push({ ...key, outcome: lineOutcome(outcome) });
  }
  return lines;
}

function lineOutcome(outcome: ReplayOutcome): BulkReplayLine["outcome"] {
  switch (outcome.kind) {
    case "replayed":
      return "replayed";
    case "refused":
      return outcome.reason === "succeeded" ? "already succeeded" : "attempt running";
    default:
      // "ambiguous" cannot happen: every key names its sender.
      return "missing";
  }
}
