import { EventStatus } from "../../src/domain/event-status.ts";
import type { EventRegister, Settlement } from "../../src/register/port.ts";
import { orderPaidEvent } from "./events.ts";
import { siteOrderOf } from "./records.ts";

/** [attempt, kind, unfinished] of one attempt. */
export type KindRow = [number, string | undefined, boolean];

export interface AheadAttempts {
  /** Claimed ahead, never called (its process died); its lease ran out and a claim just in time delivered it. */
  lost: string;
  /** Claimed ahead, called and delivered. */
  ready: string;
  /** Each event's attempts, oldest first, as the register must show them. */
  expected: Record<string, KindRow[]>;
}

const delivered: Settlement = {
  status: EventStatus.SUCCEEDED,
  order: { id: "o-1", number: "ORD-1" },
  response: { status: 201, body: "{}" },
};
const report = { durationMs: 5, outcome: "delivered", httpStatus: 201 };

/**
 * Two delivered events of `sender` whose attempts were claimed ahead
 * (port.ts, AttemptKind), made through the register port as the deliverer
 * makes them, a minute in the past: nothing is due or leased after.
 */
export async function aheadAttempts(register: EventRegister, sender = "default"): Promise<AheadAttempts> {
  const t = Date.now() - 60_000;
  const [lost, ready] = [orderPaidEvent(), orderPaidEvent()];
  for (const [index, event] of [lost, ready].entries()) {
    await register.reserve({
      sender,
      eventId: event.event_id,
      fingerprint: `fp-${event.event_id}`,
      policyVersion: "test",
      body: JSON.stringify(event),
      ...siteOrderOf(JSON.stringify(event)),
      correlationId: `c-${event.event_id}`,
      now: t + index,
    });
  }
  const claims = await register.claim({ owner: "gw-1", now: t + 10, leaseMs: 1000, limit: 2, kind: "ahead" });
  const readyClaim = claims.find((claim) => claim.record.eventId === ready.event_id);
  if (claims.length !== 2 || readyClaim === undefined) throw new Error("the fixture could not claim both ahead");
  await register.settle(readyClaim.lease, delivered, { ...report, startedAt: t + 20 }, t + 25);
  const only = { sender, eventId: lost.event_id };
  const [retaken] = await register.claim({ owner: "gw-2", now: t + 2000, leaseMs: 1000, limit: 1, only });
  if (retaken === undefined) throw new Error("the fixture could not claim the lost event again");
  await register.settle(retaken.lease, delivered, { ...report, startedAt: t + 2000 }, t + 2005);
  return {
    lost: lost.event_id,
    ready: ready.event_id,
    expected: {
      [lost.event_id]: [
        [1, "ahead", true],
        [2, "just_in_time", false],
      ],
      [ready.event_id]: [[1, "ahead", false]],
    },
  };
}

/** What the register holds of `eventIds`' attempts, in the shape of AheadAttempts.expected. */
export async function attemptKinds(
  register: EventRegister,
  eventIds: readonly string[],
  sender = "default",
): Promise<Record<string, KindRow[]>> {
  const kinds: Record<string, KindRow[]> = {};
  for (const eventId of eventIds) {
    const attempts = await register.listAttempts(sender, eventId);
    kinds[eventId] = attempts.map((a): KindRow => [a.attempt, a.kind, a.finishedAt === null]);
  }
  return kinds;
}
