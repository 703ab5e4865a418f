import { once } from "node:events";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorOrder, type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { type HttpAnswer, postEvent } from "../support/http.ts";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

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
  const dir = tempDir();
  let onec: OnecEmulator;
  const processes: GatewayProcess[] = [];

  beforeAll(async () => {
    onec = await startOnecEmulator();
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await onec.close();
    dir.remove();
  });

  it("gives the sender's retry the first order, and 1C holds one", async () => {
    const env = {
      ONEC_URL: onec.url,
      DATABASE_URL: join(dir.path, "crash.db"),
      ONEC_TIMEOUT_MS: "500",
      SYNC_WAIT_MS: "5000",
    };
    const first = await spawnGateway(env);
    processes.push(first);
    onec.setFaults({ hangAfterCommit: true });

    const event = orderPaidEvent();
    const committed = once(onec.events, "committed") as Promise<[EmulatorOrder]>;
    const lostAnswer = postEvent(first.url, event).catch((error: unknown) => error);
    const [order] = await committed;
    expect(order.key).toBe(event.event_id);

    await first.kill("SIGKILL");
    expect(await lostAnswer).toBeInstanceOf(Error);
    onec.setFaults({ hangAfterCommit: false });

    const second = await spawnGateway(env);
    processes.push(second);
    const answer = await retryUntilFinished(second.url, event);

    // The first answer was lost with the process; the retry is a repeat of it.
    expect(answer.status).toBe(200);
    expect(answer.json().order).toEqual(order.order);
    expect(onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
    expect(onec.postCount()).toBe(2);

    const repeat = await postEvent(second.url, event);
    expect([repeat.status, repeat.text]).toEqual([200, answer.text]);
    expect(repeat.json()).toMatchObject({ status: "SUCCEEDED", event_id: event.event_id });
  });
});
