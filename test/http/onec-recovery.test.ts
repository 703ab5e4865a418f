import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";

/** Issue 8, part 4: "with the defaults, deliveries resume within 5 s of 1C's recovery". */
const RESUME_BOUND_MS = 5000;
/** Long enough for the breaker's cooldown to grow to its cap while 1C stays down. */
const OUTAGE_MS = 7500;

// The defaults, on purpose: only where 1C is.
const h = gatewayWithEmulator({});

describe("1C down, then back, with the default settings", { timeout: 40_000 }, () => {
  it(`resumes deliveries within ${RESUME_BOUND_MS} ms of 1C's recovery, probing at most once a second meanwhile`, async () => {
    const { deliverer } = h.gw.gateway;
    h.onec.setFaults({ unavailable: true });
    const events = Array.from({ length: 12 }, () => orderPaidEvent());
    const answers = await Promise.all(events.map((e) => postEvent(h.gw.url, e)));
    expect(answers.map((a) => a.status)).toEqual(events.map(() => 202));
    while (deliverer.breakerState === "closed") await new Promise((resolve) => deliverer.once("attempted", resolve));
    const postsAtOpen = h.onec.postCount();

    // The outage goes on: this wait is the scenario, not a wait for something to happen.
    await sleep(OUTAGE_MS);
    const probes = h.onec.postCount() - postsAtOpen;
    // Not hammering: the cooldown starts at 1 s and grows, so no more than one probe per second of outage.
    expect(probes).toBeGreaterThanOrEqual(2);
    expect(probes).toBeLessThanOrEqual(OUTAGE_MS / 1000);

    const keys = events.map((e) => e.event_id);
    const delivered = ordersFor(h.onec, keys);
    const recoveredAt = Date.now();
    h.onec.setFaults({ unavailable: false });
    await delivered;
    const resumedInMs = Date.now() - recoveredAt;
    console.log(
      `all ${events.length} events delivered ${resumedInMs} ms after 1C recovered; ${probes} probes during ${OUTAGE_MS} ms of outage`,
    );
    expect(resumedInMs).toBeLessThan(RESUME_BOUND_MS);
    expect(keys.filter((key) => ordersOf(h.onec, key) !== 1)).toEqual([]);
  });
});
