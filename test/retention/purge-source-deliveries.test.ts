import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { EventRegister } from "../../src/register/port.ts";
import type { SourceDeliveryInput } from "../../src/register/source-port.ts";
import { Purger } from "../../src/retention/purger.ts";
import { claimOne, report, reserveRequest, T0 } from "../support/records.ts";
import { registerBackends, registerPerTest } from "../support/register-backends.ts";
import { wooUnpaid } from "../support/source-deliveries.ts";

/**
 * Issue 24: the platforms' ignored and unmapped deliveries are kept for
 * support only as long as finished events are (the same retention), and go
 * in batches like them; an accepted delivery goes only with its event.
 */
const DAY = 86_400_000;
const RETENTION = 30 * DAY;
const NOW = T0 + 60 * DAY;
const OLD = T0;
const YOUNG = NOW - DAY;

function delivery(patch: Partial<SourceDeliveryInput>): SourceDeliveryInput {
  return wooUnpaid({ receivedAt: OLD, ...patch });
}

describe.each(registerBackends())("retention of platform deliveries on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  function purger(batchSize: number, log = pino({ level: "silent" })): Purger {
    return new Purger({ register, now: () => NOW, log, retentionMs: RETENTION, batchSize, intervalMs: 3_600_000 });
  }

  it("purges old ignored deliveries in batches; young ones, unmapped ones and accepted ones of kept events stay", async () => {
    for (let i = 0; i < 5; i += 1) await register.sources.record(delivery({ correlationId: `old-ignored-${i}` }));
    // Payments the platform was told are recorded: they wait for support, however old.
    for (let i = 0; i < 2; i += 1) {
      await register.sources.record(
        delivery({ outcome: "unmapped", key: `k-${i}`, reason: "unknown SKU", correlationId: `old-unmapped-${i}` }),
      );
    }
    await register.sources.record(delivery({ correlationId: "young-ignored", receivedAt: YOUNG }));
    // A pending event from long ago: its delivery stays as long as the event does.
    const source = delivery({ outcome: "accepted", reason: null, key: "evt-old", correlationId: "accepted" });
    await register.reserve(reserveRequest({ sender: "shop-woo", eventId: "evt-old", now: OLD, source }));

    const batches = vi.spyOn(register.sources, "purge");
    const lines: unknown[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    await purger(2, pino({ level: "info" }, sink)).runOnce();

    // 5 old rows in batches of 2: 2, 2, then 1 (short: the loop ends).
    expect(batches.mock.calls.map(([request]) => request)).toEqual([
      { olderThan: NOW - RETENTION, batchSize: 2 },
      { olderThan: NOW - RETENTION, batchSize: 2 },
      { olderThan: NOW - RETENTION, batchSize: 2 },
    ]);
    const left = await register.sources.list({ limit: 100 });
    expect(left.map((row) => row.correlationId).sort()).toEqual([
      "accepted",
      "old-unmapped-0",
      "old-unmapped-1",
      "young-ignored",
    ]);
    expect(lines).toContainEqual(expect.objectContaining({ purged_deliveries: 5 }));
  });

  it("takes an accepted delivery with its event once the event is finished and old", async () => {
    const source = delivery({ outcome: "accepted", reason: null, key: "evt-done" });
    await register.reserve(reserveRequest({ sender: "shop-woo", eventId: "evt-done", now: OLD, source }));
    const claim = await claimOne(register, { only: { sender: "shop-woo", eventId: "evt-done" }, now: OLD });
    await register.settle(
      claim.lease,
      { status: EventStatus.SUCCEEDED, order: { id: "o-1", number: "ORD-1" }, response: { status: 201, body: "{}" } },
      report,
      OLD,
    );
    expect(await purger(500).runOnce()).toBe(1);
    expect(await register.sources.list({ limit: 100 })).toEqual([]);
  });
});
