/**
 * 1C's CURRENCY_MISMATCH through the gateway: an event whose currency is not the one its order's agreement sets
 * (the emulator's agreementCurrency) is a refusal of contract 3 like any other (REFUSAL_CODES), so the gateway ends
 * it FAILED_FINAL and answers the sender 422 onec-rejected with 1C's code and text, at once and on every resend.
 * Nothing is booked in 1C, and no retry could change that: the same bytes get the same refusal.
 */
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";

// The breaker is kept out of the way (BREAKER_FAILURES): a refusal is no outage, and this file is not about it.
const h = gatewayWithEmulator(
  { SYNC_WAIT_MS: "3000", RETRY_BASE_MS: "20", DELIVERY_POLL_MS: "20", BREAKER_FAILURES: "1000" },
  { faults: { agreementCurrency: "RUB" } },
);

function inUsd() {
  return orderPaidEvent((event) => {
    event.order.currency = "USD";
    event.payment.currency = "USD";
  });
}

describe("an event in another currency than 1C's agreement (1C 422 CURRENCY_MISMATCH)", () => {
  it("answers the sender 422 onec-rejected with 1C's code, ends FAILED_FINAL, books nothing, and replays the same 422", async () => {
    const event = inUsd();
    const posts: string[] = [];
    const onPost = (p: { key: string | undefined }) => {
      if (p.key === event.event_id) posts.push(p.key);
    };
    h.onec.events.on("post", onPost);
    try {
      const first = await postEvent(h.gw.url, event);
      expect(first.status).toBe(422);
      const problem = first.json();
      expect(problem).toMatchObject({
        type: "/integration/v1/problems/onec-rejected",
        event_id: event.event_id,
        onec_error: { code: "CURRENCY_MISMATCH" },
      });
      expect(String((problem.onec_error as { message?: unknown }).message)).toContain("USD");
      expect(first.headers["idempotent-replayed"]).toBe("false");
      expect(h.onec.orders().filter((o) => o.key === event.event_id)).toEqual([]);

      const status = await call(`${h.gw.url}/integration/v1/orders/paid/${encodeURIComponent(event.event_id)}`);
      expect(status.json()).toMatchObject({ status: "FAILED_FINAL" });

      // Final: the resend is answered from the register, 1C is not asked again.
      const repeat = await postEvent(h.gw.url, event);
      expect([repeat.status, repeat.headers["idempotent-replayed"], repeat.text]).toEqual([422, "true", first.text]);
      expect(posts).toHaveLength(1);
    } finally {
      h.onec.events.off("post", onPost);
    }
  });

  it("while the same event in the agreement's currency is booked", async () => {
    const event = orderPaidEvent();
    expect(event.order.currency).toBe("RUB");
    const answer = await postEvent(h.gw.url, event);
    expect(answer.status).toBe(201);
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });
});
