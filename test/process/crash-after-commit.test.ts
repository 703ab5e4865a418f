import { once } from "node:events";
import { describe, expect, it } from "vitest";
import type { EmulatorOrder } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { call, type HttpAnswer, postEvent } from "../support/http.ts";
import { gatewayProcesses } from "../support/process.ts";
import { processBackends, registerDatabases } from "../support/process-backends.ts";

/** A sender's retry loop: repeat the same event, honouring Retry-After, until it is finished. */
async function retryUntilFinished(url: string, event: unknown, maxTries = 20): Promise<HttpAnswer> {
  for (let i = 0; i < maxTries; i++) {
    const answer = await postEvent(url, event);
    if (answer.status !== 202) return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers["retry-after"]) * 1000));
  }
  throw new Error("still 202 after all retries");
}

describe.each(processBackends())(
  "gateway on $name killed with SIGKILL after 1C committed but before it answered",
  { timeout: 60_000 },
  (backend) => {
    const databases = registerDatabases(backend);
    const h = gatewayProcesses();

    it("gives the sender's retry the first order, and 1C holds one", async () => {
      const env = {
        ONEC_URL: h.onec.url,
        DATABASE_URL: await databases.create(),
        ONEC_TIMEOUT_MS: "500",
        SYNC_WAIT_MS: "5000",
      };
      const first = await h.start(env);
      h.onec.setFaults({ hangAfterCommit: true });

      const event = orderPaidEvent();
      const committed = once(h.onec.events, "committed") as Promise<[EmulatorOrder]>;
      const lostAnswer = postEvent(first.url, event).catch((error: unknown) => error);
      const [order] = await committed;
      expect(order.key).toBe(event.event_id);

      await first.kill("SIGKILL");
      expect(await lostAnswer).toBeInstanceOf(Error);
      h.onec.setFaults({ hangAfterCommit: false });

      const second = await h.start(env);
      const answer = await retryUntilFinished(second.url, event);

      // The first answer was lost with the process; the retry is a repeat of it.
      expect(answer.status).toBe(200);
      expect(answer.json().order).toEqual(order.order);
      expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
      expect(h.onec.postCount()).toBe(2);

      const repeat = await postEvent(second.url, event);
      expect([repeat.status, repeat.text]).toEqual([200, answer.text]);
      expect(repeat.json()).toMatchObject({ status: "SUCCEEDED", event_id: event.event_id });
    });

    it("after three kills during calls that 1C committed but never answered, ends SUCCEEDED with 1C's order, not abandoned", async () => {
      // Issue 8, part 3: before, the third restart declared the event FAILED_FINAL crash_loop (502
      // "do not resend") while 1C held its order. Unknown outcomes must be resolved by asking 1C.
      const env = {
        ONEC_URL: h.onec.url,
        DATABASE_URL: await databases.create(),
        ONEC_TIMEOUT_MS: "1000",
        SYNC_WAIT_MS: "0",
        DELIVERY_POLL_MS: "50",
      };
      h.onec.setFaults({ hangAfterCommit: true });
      const event = orderPaidEvent();
      const postsBefore = h.onec.postCount();
      const committed = once(h.onec.events, "committed") as Promise<[EmulatorOrder]>;
      for (let kill = 1; kill <= 3; kill++) {
        const gateway = await h.start(env);
        const posted = new Promise<void>((resolve) => {
          const onPost = () => {
            if (h.onec.postCount() - postsBefore < kill) return;
            h.onec.events.off("post", onPost);
            resolve();
          };
          h.onec.events.on("post", onPost);
        });
        if (kill === 1) expect((await postEvent(gateway.url, event)).status).toBe(202);
        await posted;
        await gateway.kill("SIGKILL");
      }
      const [order] = await committed;

      // 1C still hangs after every commit: only a lookup, never a fourth POST, can settle the event.
      const last = await h.start(env);
      const statusUrl = `${last.url}/integration/v1/orders/paid/${event.event_id}`;
      let status = (await call(statusUrl)).json();
      for (let i = 0; i < 200 && (status.status === "PROCESSING" || status.status === "FAILED_RETRYABLE"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        status = (await call(statusUrl)).json();
      }
      expect(status).toMatchObject({ status: "SUCCEEDED", order: order.order });
      expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
      expect(h.onec.postCount() - postsBefore).toBe(3);

      const repeat = await postEvent(last.url, event);
      expect(repeat.status).toBe(200);
      expect(repeat.json()).toMatchObject({ status: "SUCCEEDED", order: order.order });
      h.onec.setFaults({ hangAfterCommit: false });
    });
  },
);
