import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { postEvent } from "../support/http.ts";
import { gatewayPairOn, processBackends } from "../support/process-backends.ts";

describe.each(processBackends())("two gateway processes on one $name register", { timeout: 30_000 }, (backend) => {
  const pair = gatewayPairOn(backend, { SYNC_WAIT_MS: "8000" });

  it("turn 50 concurrent requests for one new event_id, split across both, into one order", async () => {
    const { onec, gateways } = pair;
    onec.setFaults({ latencyMs: 300 });
    const event = orderPaidEvent();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postEvent(gateways[i % 2 === 0 ? 0 : 1].url, event)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });

  it("turn concurrent distinct events on both into one order each", async () => {
    const { onec, gateways } = pair;
    onec.setFaults({ latencyMs: 0 });
    const events = Array.from({ length: 20 }, () => orderPaidEvent());
    const answers = await Promise.all(events.flatMap((event) => gateways.map((g) => postEvent(g.url, event))));
    expect(answers.every((a) => a.status === 201 || a.status === 200)).toBe(true);
    for (const event of events) {
      expect(onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
    }
  });
});
