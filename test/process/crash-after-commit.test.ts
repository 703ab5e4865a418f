import { once } from "node:events";
import { describe, expect, it } from "vitest";
import type { EmulatorOrder } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { type HttpAnswer, postEvent } from "../support/http.ts";
import { gatewayProcesses } from "../support/process.ts";

/** A sender's retry loop: repeat the same event, honouring Retry-After, until it is finished. */
async function retryUntilFinished(url: string, event: unknown, maxTries = 20): Promise<HttpAnswer> {
  for (let i = 0; i < maxTries; i++) {
    const answer = await postEvent(url, event);
    if (answer.status !== 202) return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers["retry-after"]) * 1000));
  }
  throw new Error("still 202 after all retries");
}

describe("gateway killed with SIGKILL after 1C committed but before it answered", { timeout: 30_000 }, () => {
  const h = gatewayProcesses();

  it("gives the sender's retry the first order, and 1C holds one", async () => {
    const env = {
      ONEC_URL: h.onec.url,
      DATABASE_URL: h.databasePath("crash.db"),
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
});
