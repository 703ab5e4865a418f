import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { PurgeRequest, Settlement } from "../../src/register/port.ts";
import { RegisterCore } from "../../src/register/register-core.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { startTestGateway } from "../support/gateway.ts";
import { reserveRequest } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

/**
 * README: "`PURGE_INTERVAL_MS` … how often the server purges, in batches of 500".
 * The server itself, on a register holding 501 events that finished longer
 * ago than RETENTION_HOURS: its first run removes them all, in two batches,
 * one of 500 and one of the last event.
 */

const HOUR = 3_600_000;
/** README's batch size. */
const BATCH = 500;

const SUCCEEDED: Settlement = {
  status: EventStatus.SUCCEEDED,
  order: { id: "o-1", number: "ORD-1" },
  response: { status: 201, body: "{}" },
};

const dir = tempDir("server-purge-");
afterAll(() => dir.remove());

/** Events received and finished (SUCCEEDED) at `at`, and pending ones received then; written before the server starts. */
async function fill(
  path: string,
  finished: ReadonlyArray<{ prefix: string; count: number; at: number }>,
  pending: ReadonlyArray<{ eventId: string; at: number }>,
): Promise<void> {
  const register = new SqliteRegister(path);
  const reserve = (eventId: string, at: number) =>
    register.reserve(reserveRequest({ eventId, correlationId: `c-${eventId}`, now: at }));
  try {
    for (const { eventId, at } of pending) await reserve(eventId, at);
    for (const { prefix, count, at } of finished) {
      const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
      await Promise.all(ids.map((id) => reserve(id, at)));
      const claims = await Promise.all(
        ids.map((id) =>
          register.claim({ owner: "test", now: at, leaseMs: 1000, limit: 1, only: { sender: "default", eventId: id } }),
        ),
      );
      const leases = claims.flat().map((claim) => claim.lease);
      await Promise.all(
        leases.map((lease) => register.settle(lease, SUCCEEDED, { startedAt: at, durationMs: 1, outcome: "x" }, at)),
      );
    }
  } finally {
    await register.close();
  }
}

describe("the server's purger", { timeout: 20_000 }, () => {
  it("removes 501 finished events past the retention in one run, in batches of 500", async () => {
    const path = join(dir.path, "gateway.db");
    const now = Date.now();
    await fill(
      path,
      [
        { prefix: "old", count: BATCH + 1, at: now - 25 * HOUR },
        { prefix: "young", count: 1, at: now - HOUR },
      ],
      [{ eventId: "old-pending", at: now - 25 * HOUR }],
    );

    // Every purge batch any register of this file runs, as it runs: the server's own register is
    // behind a proxy of the gateway's, so the method is watched where every register gets it.
    const purgeFinished = RegisterCore.prototype.purgeFinished;
    const batches: Array<{ batchSize: number; purged: number }> = [];
    let runEnded = (): void => undefined;
    const ended = new Promise<void>((resolve) => {
      runEnded = resolve;
    });
    const watch = vi.spyOn(RegisterCore.prototype, "purgeFinished").mockImplementation(async function (
      this: RegisterCore,
      request: PurgeRequest,
    ) {
      const purged = await purgeFinished.call(this, request);
      batches.push({ batchSize: request.batchSize, purged });
      // A run ends with a batch that comes back short.
      if (purged < request.batchSize) runEnded();
      return purged;
    });
    const gw = await startTestGateway({
      ONEC_URL: "http://127.0.0.1:9/hs",
      DATABASE_URL: path,
      DELIVERER: "off",
      RETENTION_HOURS: "24",
      // The least it takes: its first run comes one interval after the start.
      PURGE_INTERVAL_MS: "1000",
    });
    try {
      const register = gw.gateway.register;
      await ended;

      expect(batches).toEqual([
        { batchSize: BATCH, purged: BATCH },
        { batchSize: BATCH, purged: 1 },
      ]);
      expect(await register.list({ status: EventStatus.SUCCEEDED, limit: 1000 })).toMatchObject([
        { eventId: "young-0" },
      ]);
      expect(await register.find("default", "old-pending")).toMatchObject({ status: EventStatus.PROCESSING });
      expect(gw.logs).toContainEqual(expect.objectContaining({ msg: "purged finished events", purged: BATCH + 1 }));
    } finally {
      await gw.close();
      watch.mockRestore();
    }
  });
});
