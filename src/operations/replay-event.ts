import type { EventRegister, ReplayRequest, ReplayResult } from "../register/port.ts";
import { lookUpEvent } from "./look-up-event.ts";

/** The audit trail's bounds, the same whether a replay comes from the admin API or the command line. */
export const REPLAY_REASON_MAX = 500;
export const REQUESTED_BY_MAX = 128;

/** A replay as support asks for it: by event_id, the sender only when several used the id. */
export type ReplayCommand = Omit<ReplayRequest, "sender"> & { sender?: string | undefined };

/** The register's answer, or: several senders used this event_id, and the caller must name one. */
export type ReplayOutcome = ReplayResult | { kind: "ambiguous"; senders: string[] };

/**
 * Puts one event back to PROCESSING with a fresh attempt budget and records
 * who asked and why. Support knows an event by its id alone, so the sender is
 * looked up first. The caller wakes a deliverer if it has one; otherwise the
 * next poll picks the event up.
 */
export async function replayEvent(register: EventRegister, command: ReplayCommand): Promise<ReplayOutcome> {
  const lookup = await lookUpEvent(register, command.eventId, command.sender);
  if (lookup.kind !== "found") return lookup;
  const { requestedBy, reason, force, now, expectedStatus } = command;
  return register.replay({
    sender: lookup.record.sender,
    eventId: command.eventId,
    requestedBy,
    reason,
    force,
    now,
    ...(expectedStatus === undefined ? {} : { expectedStatus }),
  });
}
