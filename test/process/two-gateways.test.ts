import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { postEvent } from "../support/http.ts";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

describe("two gateway processes on one SQLite file", { timeout: 30_000 }, () => {
  const dir = tempDir();
  let onec: OnecEmulator;
  let gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    onec = await startOnecEmulator();
    const env = { ONEC_URL: onec.url, DATABASE_URL: join(dir.path, "shared.db"), SYNC_WAIT_MS: "8000" };
    // Started together, so they also race on the first migration.
    gateways = await Promise.all([spawnGateway(env), spawnGateway(env)]);
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.kill("SIGTERM")));
    await onec.close();
    dir.remove();
  });

  it("turn 50 concurrent requests for one new event_id, split across both, into one order", async () => {
    onec.setFaults({ latencyMs: 300 });
    const event = orderPaidEvent();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postEvent((gateways[i % 2] as GatewayProcess).url, event)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });

  it("turn concurrent distinct events on both into one order each", async () => {
    onec.setFaults({ latencyMs: 0 });
    const events = Array.from({ length: 20 }, () => orderPaidEvent());
    const answers = await Promise.all(events.flatMap((event) => gateways.map((g) => postEvent(g.url, event))));
    expect(answers.every((a) => a.status === 201 || a.status === 200)).toBe(true);
    for (const event of events) {
      expect(onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
    }
  });
});
