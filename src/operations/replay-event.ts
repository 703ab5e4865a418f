import type { EventStatus } from "../register/event-status.ts";
import type { EventRecord, EventRegister, ReplayRequest } from "../register/port.ts";
import { lookUpEvent } from "./look-up-event.ts";

/** The audit trail's bounds, the same whether a replay comes from the admin API or the command line. */
export const REPLAY_REASON_MAX = 500;
export const REQUESTED_BY_MAX = 128;

/** A replay as support asks for it: by event_id, the sender only when several used the id. */
export type ReplayCommand = Omit<ReplayRequest, "sender"> & { sender?: string | undefined };

export type ReplayOutcome =
  | { kind: "replayed"; record: EventRecord; fromStatus: EventStatus }
  | { kind: "missing" }
  /** Several senders used this event_id; the caller must name one. */
  | { kind: "ambiguous"; senders: string[] }
  /** Already SUCCEEDED (without force), or an attempt is running now. */
  | { kind: "refused"; reason: "succeeded" | "in_flight"; record: EventRecord };

/**
 * Puts one event back to PROCESSING with a fresh attempt budget and records
 * who asked and why. Support knows an event by its id alone, so the sender is
 * looked up first. The caller wakes a deliverer if it has one; otherwise the
 * next poll picks the event up.
 */
export async function replayEvent(register: EventRegister, command: ReplayCommand): Promise<ReplayOutcome> {
  const lookup = await lookUpEvent(register, command.eventId, command.sender);
  if (lookup.kind !== "found") return lookup;
  const { requestedBy, reason, force, now } = command;
  const result = await register.replay({
    sender: lookup.record.sender,
    eventId: command.eventId,
    requestedBy,
    reason,
    force,
    now,
  });
  switch (result.result) {
    case "replayed":
      return { kind: "replayed", record: result.record, fromStatus: result.fromStatus };
    case "not_found":
      return { kind: "missing" };
    case "refused":
      return { kind: "refused", reason: result.reason, record: result.record };
  }
}
