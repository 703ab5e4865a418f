import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Deadlines } from "../../src/register/postgres/link.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { reserveRequest } from "../support/records.ts";
import { type SilentProxy, silentProxy } from "../support/silent-proxy.ts";

/**
 * The LISTEN connection across a silent partition: packets dropped, nothing
 * closed or reset. Such a connection never closes by itself; TCP keepalive
 * (the driver's: 60 s idle, then the kernel's probes) would notice after
 * minutes, and meanwhile no other instance's change reached this one's
 * waiters but by polling. The feed now drops it and listens anew when the
 * link finds the database lost, and when its own check on the connection
 * goes unanswered: notifications resume within about a second of the
 * network's return.
 */

const pg = postgresForTests();

const REQUEST_MS = 300;
/** Well below keepalive's minutes, and above the feed's way back: a connect_timeout (1 s) and a retry. */
const RESUMED_WITHIN_MS = 3000;
/** How long a case looks for the notices before it says they never came. */
const GIVE_UP_MS = 10_000;

describe.skipIf(!pg.enabled)("PostgreSQL change feed across a silent partition", { timeout: 30_000 }, () => {
  let db: TestDatabase;
  let proxy: SilentProxy;
  const opened: PostgresRegister[] = [];

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
  });
  beforeEach(async () => {
    pg.require();
    proxy = await silentProxy(new URL(db.url));
  });
  afterEach(async () => {
    proxy.close();
    await Promise.all(opened.splice(0).map((register) => register.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** An instance behind the proxy: the one whose network fails. */
  async function behindProxy(deadlines: Partial<Deadlines>): Promise<PostgresRegister> {
    const register = await PostgresRegister.open(proxy.url, {
      poolMax: 2,
      connectTimeoutSeconds: 1,
      deadlines: { requestMs: REQUEST_MS, probeEveryMs: 50, ...deadlines },
    });
    opened.push(register);
    return register;
  }

  /** Another instance, straight to the server: its changes are the notices the first must hear. */
  async function direct(): Promise<PostgresRegister> {
    const register = await PostgresRegister.open(db.url, { poolMax: 2 });
    opened.push(register);
    return register;
  }

  /**
   * From now, `sender` records an event every 100 ms until `listener` is told
   * of one of them by notification; how long that took, or undefined if none
   * came within GIVE_UP_MS. A notice sent before the listener listens again
   * is lost (polling finds that change), so one is sent until one arrives.
   */
  async function msUntilNotified(
    listener: PostgresRegister,
    sender: PostgresRegister,
    prefix: string,
  ): Promise<number | undefined> {
    const started = performance.now();
    let toldAt: number | undefined;
    let stop = () => {};
    const told = new Promise<void>((resolve) => {
      stop = listener.watch((change) => {
        if (change.kind !== "recorded" || change.remote !== true || !change.eventId.startsWith(prefix)) return;
        toldAt ??= performance.now();
        resolve();
      });
    });
    try {
      for (let i = 0; toldAt === undefined && performance.now() - started < GIVE_UP_MS; i++) {
        await sender.reserve(reserveRequest({ eventId: `${prefix}${i}` }));
        await Promise.race([told, new Promise((resolve) => setTimeout(resolve, 100))]);
      }
    } finally {
      stop();
    }
    return toldAt === undefined ? undefined : toldAt - started;
  }

  it("listens again within a few seconds of the network's return after the link found the database lost", async () => {
    // Its own check far off: here the link alone finds the partition.
    const a = await behindProxy({ listenCheckEveryMs: 60_000 });
    const b = await direct();
    expect(await msUntilNotified(a, b, "before-")).toBeLessThan(RESUMED_WITHIN_MS);

    proxy.silence();
    // A call meets the silence: it overruns, the check on a connection of its own does too, the link says lost.
    await expect(a.ping()).rejects.toThrow();
    await expect.poll(() => a.link.state, { timeout: 2000, interval: 10 }).toBe("lost");
    // The feed no longer counts on its connection (before: it did until keepalive gave up).
    expect(a.hearsOtherInstances()).toBe(false);

    proxy.restore();
    const resumed = await msUntilNotified(a, b, "after-heal-");
    expect(resumed).toBeDefined();
    expect(resumed).toBeLessThan(RESUMED_WITHIN_MS);
    expect(a.hearsOtherInstances()).toBe(true);
  });

  it("replaces a LISTEN connection the network dropped while the database stayed reachable", async () => {
    // No call on this instance: the link sees nothing, and only the feed's own check can tell.
    const a = await behindProxy({ listenCheckEveryMs: 200 });
    const b = await direct();
    expect(await msUntilNotified(a, b, "before-")).toBeLessThan(RESUMED_WITHIN_MS);

    // A firewall forgets the open connections; new ones pass.
    proxy.silenceOpen();
    const resumed = await msUntilNotified(a, b, "after-drop-");
    expect(resumed).toBeDefined();
    // One check's pause and its deadline, then a new connection: about half a second.
    expect(resumed).toBeLessThan(RESUMED_WITHIN_MS);
    expect(a.link.state).toBe("up");
  });
});
