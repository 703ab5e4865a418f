import { createServer, type Server, Socket } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import type { LinkState } from "../../src/register/postgres/link.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { reserveRequest } from "../support/records.ts";
import { listenAsRelay } from "../support/tcp-proxy.ts";

/**
 * Issue 25, part 1, below the HTTP layer: a database that stops answering
 * without closing anything (a network partition, a frozen server) is the
 * case no error code reveals; only deadlines do. Every call must end within
 * its deadline however many wait for the pool, later calls must fail at
 * once, and the first call after the server answers again must succeed
 * within a second, with no stale error after it.
 */

const pg = postgresForTests();

const REQUEST_MS = 300;
/** Timers and the event loop: a call's answer may come this much after its deadline. */
const SLACK_MS = 150;
const POOL_MAX = 2;
/** Far more than the pool: most wait for a connection, as requests did in the issue. */
const CONCURRENT = 30;

/** A relay to the server that can go silent: bytes stop in both directions and new connections hang. */
async function silenceableProxy(
  target: URL,
): Promise<{ url: string; silence(): void; restore(): void; close(): void }> {
  const pairs = new Set<[Socket, Socket]>();
  let silent = false;
  const server: Server = createServer((client) => {
    client.on("error", () => {});
    if (silent) return; // accepted, never answered
    const upstream = new Socket();
    upstream.on("error", () => {});
    upstream.connect(Number(target.port || 5432), target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on("data", (chunk) => silent || upstream.write(chunk));
    upstream.on("data", (chunk) => silent || client.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => {
      client.destroy();
      pairs.delete(pair);
    });
  });
  const url = await listenAsRelay(server, target);
  return {
    url,
    silence: () => {
      silent = true;
    },
    // The silenced connections stay dead (their bytes were dropped), as after a partition: only new ones work.
    restore: () => {
      silent = false;
    },
    close: () => {
      for (const pair of pairs) for (const socket of pair) socket.destroy();
      server.close();
    },
  };
}

/** How long `call` takes to settle, and how it ended. */
async function timed(call: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await call();
    return { ms: performance.now() - started, error: undefined };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describe.skipIf(!pg.enabled)("PostgresRegister deadlines", () => {
  let db: TestDatabase;
  let proxy: Awaited<ReturnType<typeof silenceableProxy>>;
  let register: PostgresRegister;
  const states: LinkState["state"][] = [];

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
  });
  beforeEach(async () => {
    pg.require();
    proxy = await silenceableProxy(new URL(db.url));
    register = await PostgresRegister.open(proxy.url, {
      poolMax: POOL_MAX,
      connectTimeoutSeconds: 1,
      deadlines: { requestMs: REQUEST_MS, probeEveryMs: 50 },
      onLinkState: (state) => states.push(state.state),
    });
  });
  afterEach(async () => {
    proxy.close();
    await register.close();
    states.length = 0;
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("ends every call within its deadline while the server is silent, however many wait for the pool", async () => {
    await register.reserve(reserveRequest({ eventId: "before" }));
    proxy.silence();
    const calls = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        timed(() =>
          i % 2 === 0
            ? register.reserve(reserveRequest({ eventId: `during-${i}` }))
            : register.find("default", "before"),
        ),
      ),
    );
    for (const call of calls) {
      expect(call.error).toBeInstanceOf(StorageUnavailableError);
      expect(call.ms).toBeLessThan(REQUEST_MS + SLACK_MS);
    }
    // Once the check has found it lost, calls fail at once instead of waiting out a deadline each.
    await expect.poll(() => register.link.state, { timeout: 2 * REQUEST_MS + SLACK_MS }).toBe("lost");
    const meanwhile = await timed(() => register.ping());
    expect(meanwhile.error).toBeInstanceOf(StorageUnavailableError);
    expect(meanwhile.ms).toBeLessThan(20);
    expect(states).toEqual(["lost"]);
  });

  it("answers again within a second of the server, with no stale error after the first success", async () => {
    await register.reserve(reserveRequest({ eventId: "before" }));
    proxy.silence();
    await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        register.reserve(reserveRequest({ eventId: `queued-${i}` })).catch(() => undefined),
      ),
    );
    await expect.poll(() => register.link.state, { timeout: 2 * REQUEST_MS + SLACK_MS }).toBe("lost");

    proxy.restore();
    const restored = performance.now();
    let firstSuccess: number | undefined;
    while (firstSuccess === undefined && performance.now() - restored < 3000) {
      if ((await timed(() => register.ping())).error === undefined) firstSuccess = performance.now();
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(firstSuccess).toBeDefined();
    expect((firstSuccess ?? Number.POSITIVE_INFINITY) - restored).toBeLessThan(1000);

    const after = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        timed(() => register.reserve(reserveRequest({ eventId: `after-${i}` }))),
      ),
    );
    expect(after.filter((call) => call.error !== undefined).map((call) => String(call.error))).toEqual([]);
    expect(states).toEqual(["lost", "up"]);
  });
});

/**
 * A row lock held by an instance that froze before its COMMIT: the event's
 * retries wait behind it. The link's deadline answers each caller, but the
 * statement went on waiting, its pool connection with it, until the pool was
 * spent and every call, on any event, answered 503 while the database was
 * fine. The server now ends a lock wait (lock_timeout), so the pool comes back
 * while the lock still stands.
 */
describe.skipIf(!pg.enabled)("PostgresRegister behind a row lock that is never released", () => {
  let db: TestDatabase;
  let register: PostgresRegister;

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
  });
  afterAll(async () => {
    await register?.close();
    await db?.drop();
  });

  it("answers other events again within the lock wait's bound, the lock still held", { timeout: 30_000 }, async () => {
    pg.require();
    register = await PostgresRegister.open(db.url, { poolMax: POOL_MAX, deadlines: { requestMs: 1000 } });
    await register.reserve(reserveRequest({ eventId: "locked" }));
    // The frozen instance: an uncommitted UPDATE of the event's row, never committed while the test runs.
    const frozen = await db.sql.reserve();
    await frozen`BEGIN`;
    await frozen`UPDATE inbound_events SET updated_at = updated_at WHERE event_id = 'locked'`;
    try {
      // The shop retries that event, one retry after another's 503, more times than the pool has
      // connections: each is a statement of its own, and waits behind the lock.
      for (let retry = 0; retry <= POOL_MAX; retry++) {
        await expect(register.reserve(reserveRequest({ eventId: "locked" }))).rejects.toThrow(StorageUnavailableError);
      }
      // Another event: it must be taken again well before the lock goes (it never goes while the test runs).
      const started = performance.now();
      await expect
        .poll(
          async () => {
            try {
              return (await register.reserve(reserveRequest({ eventId: `other-${performance.now()}` }))).outcome;
            } catch {
              return "503";
            }
          },
          { timeout: 15_000, interval: 250 },
        )
        .toBe("created");
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await frozen`ROLLBACK`;
      frozen.release();
    }
  });
});
