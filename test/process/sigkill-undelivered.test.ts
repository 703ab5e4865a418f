import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { call, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { gatewayProcesses } from "../support/process.ts";
import { processBackends, registerDatabases } from "../support/process-backends.ts";

describe.each(processBackends())(
  "SIGKILL with 20 acknowledged, undelivered events on $name",
  { timeout: 60_000 },
  (backend) => {
    const databases = registerDatabases(backend);
    const h = gatewayProcesses();

    it("delivers all 20 after a restart, each exactly once", async () => {
      const env = {
        ONEC_URL: h.onec.url,
        DATABASE_URL: await databases.create(),
        SYNC_WAIT_MS: "0",
        ONEC_TIMEOUT_MS: "1000",
        ONEC_MAX_CONCURRENCY: "4",
        DELIVERY_POLL_MS: "50",
      };
      // 1C is slow: four calls hang in flight when the process dies, sixteen wait their turn.
      h.onec.setFaults({ latencyMs: 4000 });
      const first = await h.start(env);
      const events = Array.from({ length: 20 }, () => orderPaidEvent());
      const answers = await Promise.all(events.map((e) => postEvent(first.url, e)));
      expect(answers.map((a) => a.status)).toEqual(events.map(() => 202));
      while (h.onec.postCount() < 4) await new Promise((resolve) => h.onec.events.once("post", resolve));

      await first.kill("SIGKILL");
      expect(h.onec.orders()).toHaveLength(0);
      h.onec.setFaults({ latencyMs: 0 });

      const delivered = ordersFor(
        h.onec,
        events.map((e) => e.event_id),
      );
      const second = await h.start(env);
      await delivered;

      for (const event of events) {
        expect(ordersOf(h.onec, event.event_id)).toBe(1);
      }
      // The four that died in flight waited for their lease, then went again with the same key.
      let succeeded = 0;
      for (const event of events) {
        for (let i = 0; i < 100; i++) {
          const status = (await call(`${second.url}/integration/v1/orders/paid/${event.event_id}`)).json();
          if (status.status === "SUCCEEDED") {
            succeeded += 1;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      expect(succeeded).toBe(20);
    });
  },
);
