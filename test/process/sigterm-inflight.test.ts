import { once } from "node:events";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { type HttpAnswer, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

describe("SIGTERM during 20 in-flight requests to a slow 1C", { timeout: 60_000 }, () => {
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

  it("answers every request, exits within 10 s, and loses nothing pending", async () => {
    const env = { ONEC_URL: onec.url, DATABASE_URL: join(dir.path, "term.db"), SYNC_WAIT_MS: "8000" };
    onec.setFaults({ latencyMs: 1500 });
    const gateway = await spawnGateway(env);
    processes.push(gateway);

    const events = Array.from({ length: 20 }, () => orderPaidEvent());
    const answers = events.map((e) => postEvent(gateway.url, e).catch((error: unknown) => error as Error)) as Array<
      Promise<HttpAnswer | Error>
    >;
    // Four calls reach 1C (ONEC_MAX_CONCURRENCY); all twenty requests are waiting on them.
    while (onec.postCount() < 4) await once(onec.events, "post");

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
    onec.setFaults({ latencyMs: 0 });
    processes.push(await spawnGateway(env));
    await ordersFor(
      onec,
      events.map((e) => e.event_id),
    );
    for (const event of events) expect(ordersOf(onec, event.event_id)).toBe(1);
  });
});
