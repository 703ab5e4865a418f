import { describe, expect, it } from "vitest";
import { READY_SHARE } from "../../src/delivery/deliverer.ts";
import { leaseMsFor } from "../../src/gateway.ts";

/**
 * An attempt on an event's last chance makes two calls to 1C one after the
 * other, each within ONEC_TIMEOUT_MS: the POST, and when it timed out, the
 * question whether 1C has the event (README, "what happens when…"). Its
 * lease must outlive both, even for a claim made ahead that waited its
 * longest for a slot; otherwise a hanging 1C's attempts are taken over and
 * counted as crashes by the poison rule.
 */
describe("the delivery lease", () => {
  it.each([100, 1000, 2000, 10_000, 60_000, 600_000])(
    "outlives a POST and a lookup that both run out ONEC_TIMEOUT_MS=%i, after a ready claim's longest wait",
    (timeoutMs) => {
      const lease = leaseMsFor(timeoutMs);
      const readyWait = lease * READY_SHARE;
      expect(readyWait + 2 * timeoutMs).toBeLessThan(lease);
      // A crashed attempt is taken over soon after: the margin stays under one more deadline (and 1 s).
      expect(lease).toBeLessThanOrEqual(3 * timeoutMs + 1000);
    },
  );
});
