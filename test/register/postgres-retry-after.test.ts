import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { migrateDatabase } from "../../src/register/postgres/migrate.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postEvent } from "../support/http.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";

/**
 * On PostgreSQL the register's times are the database's (now() in each
 * statement), but a 202's Retry-After was their difference with the
 * gateway's Date.now(): with the two hosts' clocks ten minutes apart, an
 * event due now was answered "Retry-After: 600" by a gateway running
 * behind, and one due in a minute "1" by a gateway running ahead. Each case
 * here skews the gateway's clock (Date.now, for the whole process) and
 * expects the database-side difference, read from the database itself.
 */

const pg = postgresForTests();
const SKEW_MS = 10 * 60_000;
/** Half a second past a whole minute: a few milliseconds between the write and the answer do not cross a second. */
const DUE_IN_MS = 60_500;

describe.skipIf(!pg.enabled)("Retry-After on PostgreSQL, the gateway's clock apart from the database's", () => {
  let db: TestDatabase;
  let onec: OnecEmulator;
  let gateway: TestGateway | undefined;

  beforeAll(async () => {
    onec = await startOnecEmulator();
    const created = await pg.database();
    if (created === undefined) return;
    db = created;
    await migrateDatabase(db.url);
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await db?.drop();
    await onec?.close();
  });

  async function databaseNow(): Promise<number> {
    const rows = await db.sql<{ now: string }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now`;
    return Number(rows[0]?.now);
  }

  /** Seconds from the database's `from` (and `to`, a moment later) until `dueAt`, as Retry-After rounds. */
  function secondsUntil(dueAt: number, from: number, to: number): [number, number] {
    return [Math.max(1, Math.ceil((dueAt - to) / 1000)), Math.max(1, Math.ceil((dueAt - from) / 1000))];
  }

  it.each([
    ["behind", -SKEW_MS],
    ["ahead", SKEW_MS],
  ])("answers the database's own wait with the gateway's clock ten minutes %s", async (_, skewMs) => {
    pg.require();
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + skewMs);
    gateway = await startTestGateway({
      ONEC_URL: onec.url,
      DATABASE_URL: db.url,
      SYNC_WAIT_MS: "0",
      DELIVERER: "off",
    });
    const event = orderPaidEvent();

    // New: due at once on the database's clock, so the sender looks again in a second.
    const first = await postEvent(gateway.url, event);
    expect(first.status).toBe(202);
    expect(first.headers["retry-after"]).toBe("1");

    // A retry the database holds back a minute: the repeat is told to wait that long, not ten minutes more or less.
    const [row] = await db.sql<{ next_attempt_at: string }[]>`
      UPDATE inbound_events
         SET status = 'FAILED_RETRYABLE', last_error = 'down', last_error_class = 'connect',
             next_attempt_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + ${DUE_IN_MS}
       WHERE event_id = ${event.event_id}
      RETURNING next_attempt_at`;
    const dueAt = Number(row?.next_attempt_at);
    const before = await databaseNow();
    const repeat = await postEvent(gateway.url, event);
    const after = await databaseNow();
    expect(repeat.status).toBe(202);
    expect(repeat.json()).toMatchObject({ status: "FAILED_RETRYABLE" });
    const [least, most] = secondsUntil(dueAt, before, after);
    const retryAfter = Number(repeat.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(least);
    expect(retryAfter).toBeLessThanOrEqual(most);
    expect(retryAfter).toBe(61);
  });
});
