import { describe, expect, it } from "vitest";
import type { EventStatus } from "../../src/domain/event-status.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";

/**
 * The gateway's POST to 1C times out while 1C is still posting the order (1C's lock wait alone can
 * be 20 s; ONEC_TIMEOUT_MS is 10 s by default). The round's budget is spent, so the gateway asks
 * 1C whether it holds the event, and only the contract's 404 ends it FAILED_FINAL. 1C's status read
 * waits for the key's lock (the extension's СостояниеСобытия, the emulator's postingMs): the
 * gateway's lookup times out or gets 503, tries again, and finds the order once it is committed.
 * A read that did not wait answered 404 before the commit, and the event ended FAILED_FINAL with
 * its order booked in 1C.
 */
const POSTING_MS = 1200;
const h = gatewayWithEmulator(
  {
    ONEC_TIMEOUT_MS: "300",
    RETRY_MAX_ATTEMPTS: "1",
    RETRY_BASE_MS: "50",
    DELIVERY_POLL_MS: "20",
    SYNC_WAIT_MS: "0",
    BREAKER_FAILURES: "1000",
  },
  { faults: { postingMs: POSTING_MS } },
);

/** Resolves with the event's first final status, as the gateway's register commits it. */
function finalStatus(eventId: string): Promise<EventStatus> {
  return new Promise((resolve) => {
    const stop = h.gw.gateway.register.watch((change) => {
      if (change.kind !== "settled" || change.eventId !== eventId) return;
      if (change.status !== "SUCCEEDED" && change.status !== "FAILED_FINAL") return;
      stop();
      resolve(change.status);
    });
  });
}

describe("asking 1C about an event whose order is still posting", () => {
  it("ends SUCCEEDED with 1C's one order, never FAILED_FINAL on a 404 read before the commit", async () => {
    const event = orderPaidEvent();
    const ended = finalStatus(event.event_id);
    const accepted = await postEvent(h.gw.url, event);
    expect(accepted.status).toBe(202);
    expect(await ended).toBe("SUCCEEDED");
    const orders = h.onec.orders().filter((order) => order.key === event.event_id);
    expect(orders).toHaveLength(1);
    const record = await h.gw.gateway.register.find("default", event.event_id);
    expect(record?.order).toEqual(orders[0]?.order);
    // The POST timed out: the outcome came from a lookup, after the first one could not tell.
    const attempts = await h.gw.gateway.register.listAttempts("default", event.event_id);
    expect(attempts[0]?.errorClass).toBe("timeout");
  }, 15_000);
});
