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
