import { EventStatus } from "../../domain/event-status.ts";
import { replayEvent } from "../../operations/replay-event.ts";
import type { EventRecord, EventRegister, ReplayRefusal } from "../../register/port.ts";
import type { CliContext } from "../context.ts";
import { iso } from "../format.ts";

/** Who asks and why: written to the event_replays audit table with every replay. */
export interface ReplayRequestOptions {
  reason: string;
  requestedBy: string;
  /** Replay a SUCCEEDED event too (1C answers with the order it already has). */
  force: boolean;
}

export interface ReplayEventOptions extends ReplayRequestOptions {
  eventId: string;
  /** Whose event, when several senders used the id. */
  sender: string | undefined;
}

export interface ReplayLine {
  replayed: boolean;
  /** Not replayed because it left the status a bulk replay chose it by: nothing is wrong. */
  changed?: boolean;
  /** `evt-1: FAILED_FINAL → PROCESSING (replay by x: reason)`, or why not. */
  line: string;
}

/**
 * Puts one event back to PROCESSING with a fresh attempt budget. The running
 * gateway (or `gateway worker`) picks it up at its next poll (DELIVERY_POLL_MS).
 */
export async function replayOne(
  register: EventRegister,
  eventId: string,
  request: ReplayRequestOptions & { expectedStatus?: EventStatus },
  now: number,
  sender?: string,
): Promise<ReplayLine> {
  const { requestedBy, reason, force, expectedStatus } = request;
  const command = { eventId, sender, requestedBy, reason, force, now };
  const outcome = await replayEvent(register, expectedStatus === undefined ? command : { ...command, expectedStatus });
  switch (outcome.kind) {
    case "replayed": {
      const how = request.force && outcome.fromStatus === EventStatus.SUCCEEDED ? "forced replay" : "replay";
      return {
        replayed: true,
        line: `${eventId}: ${outcome.fromStatus} → ${outcome.record.status} (${how} by ${request.requestedBy}: ${request.reason})`,
      };
    }
    case "missing":
      return { replayed: false, line: `${eventId}: no event with this event_id` };
    case "ambiguous":
      return { replayed: false, line: `${eventId}: sent by ${outcome.senders.join(", ")}; add --sender <one of them>` };
    case "refused":
      return {
        replayed: false,
        changed: outcome.reason === "changed",
        line: `${eventId}: ${outcome.reason === "changed" ? "" : "refused: "}${refusal(outcome.reason, outcome.record)}`,
      };
  }
}

function refusal(reason: ReplayRefusal, record: EventRecord): string {
  if (reason === "changed") return `now ${record.status}, no longer what it was chosen by; left as it is`;
  if (reason === "succeeded") {
    const order = record.order === null ? "" : ` (order ${record.order.number})`;
    return `already SUCCEEDED${order}; add --force to send the same bytes again (1C answers with the order it has)`;
  }
  const until = record.leaseUntil === null ? "" : ` until ${iso(record.leaseUntil)}`;
  return `an attempt is running now (lease held by ${record.leaseOwner ?? "?"}${until}); replay it after it ends`;
}

/** `gateway replay <event_id>`: 0 when replayed, 1 when unknown or refused. */
export async function replayOneCommand(
  options: ReplayEventOptions,
  register: EventRegister,
  io: CliContext,
): Promise<number> {
  const { eventId, sender, ...request } = options;
  const outcome = await replayOne(register, eventId, request, io.now(), sender);
  if (outcome.replayed) {
    io.out(outcome.line);
    return 0;
  }
  io.err(outcome.line);
  return 1;
}
