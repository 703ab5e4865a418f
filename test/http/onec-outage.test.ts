import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";

let onec: OnecEmulator;
let gw: TestGateway;

beforeAll(async () => {
  onec = await startOnecEmulator();
  gw = await startTestGateway({
    ONEC_URL: onec.url,
    SYNC_WAIT_MS: "300",
    RETRY_BASE_MS: "50",
    RETRY_MAX_DELAY_MS: "200",
    DELIVERY_POLL_MS: "25",
    BREAKER_FAILURES: "3",
    BREAKER_COOLDOWN_MS: "100",
  });
});
afterAll(async () => {
  await gw.close();
  await onec.close();
});

describe("1C down", { timeout: 30_000 }, () => {
  it("answers 202 to every event, then delivers each exactly once when 1C returns", async () => {
    onec.setFaults({ unavailable: true, retryAfterSeconds: 0 });
    const events = Array.from({ length: 20 }, () => orderPaidEvent());
    const answers = await Promise.all(events.map((e) => postEvent(gw.url, e)));
    expect(answers.map((a) => a.status)).toEqual(events.map(() => 202));
    expect(answers.every((a) => a.headers.location?.startsWith("/integration/v1/orders/paid/"))).toBe(true);
    // While 1C is down the breaker opens: waiting events are not charged for the outage.
    const status = (await call(`${gw.url}/integration/v1/orders/paid/${events[19]?.event_id}`)).json();
    expect(["PROCESSING", "FAILED_RETRYABLE"]).toContain(status.status);

    const delivered = ordersFor(
      onec,
      events.map((e) => e.event_id),
    );
    onec.setFaults({ unavailable: false });
    await delivered;
    await gw.gateway.deliverer.idle();

    for (const event of events) {
      expect(ordersOf(onec, event.event_id)).toBe(1);
      const repeat = await postEvent(gw.url, event);
      expect([repeat.status, repeat.json().status]).toEqual([200, "SUCCEEDED"]);
    }
  });
});
