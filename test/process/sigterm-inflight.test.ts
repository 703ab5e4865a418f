import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { call, type HttpAnswer, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { gatewayProcesses } from "../support/process.ts";
import { processBackends, registerDatabases } from "../support/process-backends.ts";

/** Polls the gateway's status URLs (another process: there is no event to await) until each is known. */
async function allRecorded(url: string, eventIds: string[]): Promise<void> {
  for (let round = 0; round < 200; round++) {
    const known = await Promise.all(eventIds.map((id) => call(`${url}/integration/v1/orders/paid/${id}`)));
    if (known.every((answer) => answer.status === 200)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the gateway did not record every event");
}

describe.each(processBackends())(
  "SIGTERM during 20 in-flight requests to a slow 1C, on $name",
  { timeout: 60_000 },
  (backend) => {
    const databases = registerDatabases(backend);
    const h = gatewayProcesses();

    it("answers every request, exits within 10 s, and loses nothing pending", async () => {
      const env = { ONEC_URL: h.onec.url, DATABASE_URL: await databases.create(), SYNC_WAIT_MS: "8000" };
      h.onec.setFaults({ latencyMs: 1500 });
      const gateway = await h.start(env);

      const events = Array.from({ length: 20 }, () => orderPaidEvent());
      const answers = events.map((e) => postEvent(gateway.url, e).catch((error: unknown) => error as Error)) as Array<
        Promise<HttpAnswer | Error>
      >;
      // Four calls reach 1C (ONEC_MAX_CONCURRENCY), and the gateway has recorded all twenty events:
      // every request is in flight inside it, none still on its way in.
      while (h.onec.postCount() < 4) await once(h.onec.events, "post");
      await allRecorded(
        gateway.url,
        events.map((e) => e.event_id),
      );

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
  },
);
