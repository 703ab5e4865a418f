import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { type HttpAnswer, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { gatewayProcesses } from "../support/process.ts";

describe("SIGTERM during 20 in-flight requests to a slow 1C", { timeout: 60_000 }, () => {
  const h = gatewayProcesses();

  it("answers every request, exits within 10 s, and loses nothing pending", async () => {
    const env = { ONEC_URL: h.onec.url, DATABASE_URL: h.databasePath("term.db"), SYNC_WAIT_MS: "8000" };
    h.onec.setFaults({ latencyMs: 1500 });
    const gateway = await h.start(env);

    const events = Array.from({ length: 20 }, () => orderPaidEvent());
    const answers = events.map((e) => postEvent(gateway.url, e).catch((error: unknown) => error as Error)) as Array<
      Promise<HttpAnswer | Error>
    >;
    // Four calls reach 1C (ONEC_MAX_CONCURRENCY); all twenty requests are waiting on them.
    while (h.onec.postCount() < 4) await once(h.onec.events, "post");

    const stoppedAt = Date.now();
    const exited = once(gateway.child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.child.kill("SIGTERM");
    const settled = await Promise.all(answers);
    const [code] = await exited;
    const tookMs = Date.now() - stoppedAt;

    expect(settled.filter((a) => a instanceof Error)).toEqual([]);
    const statuses = (settled as HttpAnswer[]).map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 202)).toBe(true);
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(10_000);

    // Nothing pending was lost: a new process delivers the rest, each exactly once.
    h.onec.setFaults({ latencyMs: 0 });
    await h.start(env);
    await ordersFor(
      h.onec,
      events.map((e) => e.event_id),
    );
    for (const event of events) expect(ordersOf(h.onec, event.event_id)).toBe(1);
  });
});
