import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";

const h = gatewayWithEmulator({
  SYNC_WAIT_MS: "300",
  RETRY_BASE_MS: "50",
  RETRY_MAX_DELAY_MS: "200",
  DELIVERY_POLL_MS: "25",
  BREAKER_FAILURES: "3",
  BREAKER_COOLDOWN_MS: "100",
});

describe("1C down", { timeout: 30_000 }, () => {
  it("answers 202 to every event, then delivers each exactly once when 1C returns", async () => {
    h.onec.setFaults({ unavailable: true, retryAfterSeconds: 0 });
    const events = Array.from({ length: 20 }, () => orderPaidEvent());
    const answers = await Promise.all(events.map((e) => postEvent(h.gw.url, e)));
    expect(answers.map((a) => a.status)).toEqual(events.map(() => 202));
    expect(answers.every((a) => a.headers.location?.startsWith("/integration/v1/orders/paid/"))).toBe(true);
    // While 1C is down the breaker opens: waiting events are not charged for the outage.
    const status = (await call(`${h.gw.url}/integration/v1/orders/paid/${events[19]?.event_id}`)).json();
    expect(["PROCESSING", "FAILED_RETRYABLE"]).toContain(status.status);

    const delivered = ordersFor(
      h.onec,
      events.map((e) => e.event_id),
    );
    h.onec.setFaults({ unavailable: false });
    await delivered;
    await h.gw.gateway.deliverer.idle();

    for (const event of events) {
      expect(ordersOf(h.onec, event.event_id)).toBe(1);
      const repeat = await postEvent(h.gw.url, event);
      expect([repeat.status, repeat.json().status]).toEqual([200, "SUCCEEDED"]);
    }
  });
});
