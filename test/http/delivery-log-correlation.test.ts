import { describe, expect, it, vi } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";

/**
 * docs/api.md: the X-Correlation-ID is "written on every log line";
 * docs/operations.md (Logs): "delivery lines carry the event's", the
 * `error` line of an event that ends undelivered included.
 */

const h = gatewayWithEmulator({ SYNC_WAIT_MS: "3000", DELIVERY_POLL_MS: "20", BREAKER_FAILURES: "1000" });

describe("an event that ends undelivered", () => {
  it("is logged at error with the event's correlation id", async () => {
    // 1C refuses an article it does not know: the event ends FAILED_FINAL at once.
    h.onec.setFaults({ knownSkus: ["NO-SUCH-ARTICLE"] });
    const event = orderPaidEvent();
    const answer = await postEvent(h.gw.url, event, { "x-correlation-id": "shop-stopped-7" });
    expect(answer.status).toBe(422);
    const stopped = await vi.waitFor(() => {
      const line = h.gw.logs.find((l) => l.level === 50 && l.event_id === event.event_id);
      if (line === undefined) throw new Error("no error line yet");
      return line;
    });
    expect(stopped.msg).toMatch(/^event stopped/);
    expect(stopped.correlation_id).toBe("shop-stopped-7");
  });
});
