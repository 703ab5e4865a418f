import type { EventRecord, EventRegister } from "../register/port.ts";

export type EventLookup =
  | { kind: "found"; record: EventRecord }
  | { kind: "missing" }
  /** Several senders used this event_id; the caller must name one. */
  | { kind: "ambiguous"; senders: string[] };

/**
 * Support staff know an event by its event_id alone. One sender's event is
 * found directly; when several senders used the id, `sender` picks one.
 * Shared by the admin API and the command line.
 */
export async function lookUpEvent(register: EventRegister, eventId: string, sender?: string): Promise<EventLookup> {
  const candidates =
    sender === undefined
      ? await register.findByEventId(eventId)
      : [await register.find(sender, eventId)].filter((record): record is EventRecord => record !== undefined);
  const [first] = candidates;
  if (first === undefined) return { kind: "missing" };
  if (candidates.length === 1) return { kind: "found", record: first };
  return { kind: "ambiguous", senders: candidates.map((record) => record.sender) };
}
