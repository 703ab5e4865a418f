import type postgres from "postgres";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { RegisterReader, RegisterRow } from "../soak/register.ts";
import { pollUntil } from "./poll.ts";

/** ALLOW_ANONYMOUS: every event is the sender "default"'s, and 1C's key is the bare event_id. */
export const SENDER = "default";

const FINISHED: ReadonlySet<string> = new Set([EventStatus.SUCCEEDED, EventStatus.FAILED_FINAL]);

/** Waits until every one of `eventIds` has ended (SUCCEEDED or FAILED_FINAL), and returns their rows. */
export async function finishedRows(
  reader: RegisterReader,
  eventIds: readonly string[],
  timeoutMs: number,
): Promise<Map<string, RegisterRow>> {
  return pollUntil(
    `${eventIds.length} events finished in the register`,
    async () => {
      const rows = await reader.rows(SENDER);
      return eventIds.every((id) => FINISHED.has(rows.get(id)?.status ?? "")) ? rows : undefined;
    },
    timeoutMs,
  );
}

export interface Lease {
  eventId: string;
  /** Epoch ms: no other deliverer may claim the event before. */
  until: number;
}

/** The delivery leases `owner` holds now: the attempts it has started and not finished. */
export async function leasesHeldBy(sql: postgres.Sql, owner: string): Promise<Lease[]> {
  const rows = await sql<{ event_id: string; lease_until: string }[]>`
    SELECT event_id, lease_until::text FROM inbound_events WHERE lease_owner = ${owner} ORDER BY event_id`;
  return rows.map((row) => ({ eventId: row.event_id, until: Number(row.lease_until) }));
}
