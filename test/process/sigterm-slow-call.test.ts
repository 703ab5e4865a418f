import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { CALLS_IN_FLIGHT_GRACE_MS } from "../../src/gateway.ts";
import { orderPaidEvent } from "../support/events.ts";
import { postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { gatewayProcesses } from "../support/process.ts";
import { processBackends, registerDatabases } from "../support/process-backends.ts";

/**
 * SIGTERM while a call to 1C takes longer than the stop may wait (ONEC_TIMEOUT_MS allows up to
 * 600 s; the stop has 10 s after the drain, main.ts). The stop waited for the call until
 * close-with-grace killed the process: exit 1, the attempt left unfinished, counted towards
 * MAX_UNFINISHED_ATTEMPTS as if the process had crashed on the event, and its lease held until it
 * ran out. Now the call is cut short after CALLS_IN_FLIGHT_GRACE_MS: the attempt is written as
 * `gateway_stopping`, not charged, due at once, and the process exits 0 within the 10 s.
 */
describe.each(processBackends())(
  "SIGTERM during a call to 1C slower than the stop, on $name",
  { timeout: 60_000 },
  (backend) => {
    const databases = registerDatabases(backend);
    const h = gatewayProcesses();

    it("cuts the call short, writes its attempt as not charged and due at once, exits 0 within 10 s", async () => {
      const url = await databases.create();
      const env = { ONEC_URL: h.onec.url, DATABASE_URL: url, ONEC_TIMEOUT_MS: "30000", SYNC_WAIT_MS: "0" };
      h.onec.setFaults({ latencyMs: 25_000 });
      const gateway = await h.start(env);
      const event = orderPaidEvent();
      const posted = once(h.onec.events, "post");
      expect((await postEvent(gateway.url, event)).status).toBe(202);
      await posted;

      const stoppedAt = Date.now();
      const exited = once(gateway.child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
      gateway.child.kill("SIGTERM");
      const [code] = await exited;
      const tookMs = Date.now() - stoppedAt;
      expect(code).toBe(0);
      expect(tookMs).toBeGreaterThanOrEqual(CALLS_IN_FLIGHT_GRACE_MS - 100);
      expect(tookMs).toBeLessThan(10_000);

      const register = await databases.open(url);
      const record = await register.find("default", event.event_id);
      expect(record).toMatchObject({
        status: "FAILED_RETRYABLE",
        lastErrorClass: "gateway_stopping",
        roundAttempts: 0,
      });
      expect(record?.leaseUntil ?? null).toBeNull();
      expect(record?.nextAttemptAt).toBeLessThanOrEqual(Date.now());
      const [attempt] = await register.listAttempts("default", event.event_id);
      expect(attempt).toMatchObject({ outcome: "retryable", errorClass: "gateway_stopping" });
      expect(attempt?.finishedAt).not.toBeNull();

      // The next process sends it again; 1C (the emulator, still posting the first call) makes one order.
      h.onec.setFaults({ latencyMs: 0 });
      await h.start(env);
      await ordersFor(h.onec, [event.event_id]);
      expect(ordersOf(h.onec, event.event_id)).toBe(1);
    });
  },
);
