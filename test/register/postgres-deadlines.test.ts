import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import type { LinkState } from "../../src/register/postgres/link.ts";
import { MIGRATION_LOCK_KEY } from "../../src/register/postgres/migrate.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { claimRequest, reserveRequest } from "../support/records.ts";
import { type SilentProxy, silentProxy } from "../support/silent-proxy.ts";

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
  let proxy: SilentProxy;
  let register: PostgresRegister;
  const states: LinkState["state"][] = [];

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
  });
  beforeEach(async () => {
    pg.require();
    proxy = await silentProxy(new URL(db.url));
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

/**
 * The deadline answered the caller, but the statement went on waiting on the
 * server, its pool connection with it, until the lock wait's bound (5 s) or
 * the lock's end. The server now ends each statement after the request
 * deadline (statement_timeout), and only that statement; maintenance has
 * its own, longer bound, and a migration none.
 */
describe.skipIf(!pg.enabled)("PostgresRegister: an overrun statement ends on the server", () => {
  let db: TestDatabase;
  let register: PostgresRegister | undefined;

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
  });
  afterEach(async () => {
    await register?.close();
    register = undefined;
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** The register's statements waiting for a lock now. */
  async function lockWaiters(): Promise<number> {
    const rows = await db.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'onec-order-gateway' AND wait_event_type = 'Lock'`;
    return Number(rows[0]?.n);
  }

  /** A session of "another instance" that holds a lock until released: frozen before its COMMIT. */
  async function frozenHolding(statement: string): Promise<{ release(): Promise<void> }> {
    const frozen = await db.sql.reserve();
    await frozen`BEGIN`;
    await frozen.unsafe(statement);
    return {
      release: async () => {
        await frozen`ROLLBACK`;
        frozen.release();
      },
    };
  }

  /**
   * Runs `meanwhile` while maintenance (a count of finished events) holds the pool's one connection, waiting
   * for a table lock another session holds; then lets it finish, and returns its count.
   */
  async function whileMaintenanceWaits(open: PostgresRegister, meanwhile: () => Promise<void>): Promise<number> {
    const table = await frozenHolding("LOCK TABLE inbound_events IN ACCESS EXCLUSIVE MODE");
    let released = false;
    try {
      const counting = open.countFinished({ olderThan: Date.now() });
      // Awaited below; a failure before then must fail this case, not surface as unhandled.
      counting.catch(() => {});
      await expect.poll(lockWaiters, { timeout: REQUEST_MS, interval: 10 }).toBe(1);
      await meanwhile();
      await table.release();
      released = true;
      return await counting;
    } finally {
      if (!released) await table.release();
    }
  }

  it("ends a statement waiting on a row lock when its deadline answers, and gives its connection back", async () => {
    pg.require();
    // One connection: the overrun statement holds the only one until the server ends it.
    register = await PostgresRegister.open(db.url, { poolMax: 1, deadlines: { requestMs: REQUEST_MS } });
    const open = register;
    await open.reserve(reserveRequest({ eventId: "row-locked" }));
    const lock = await frozenHolding("UPDATE inbound_events SET updated_at = updated_at WHERE event_id = 'row-locked'");
    try {
      const call = timed(() => open.reserve(reserveRequest({ eventId: "row-locked" })));
      await expect.poll(lockWaiters, { timeout: REQUEST_MS, interval: 10 }).toBe(1);
      const answered = await call;
      expect(answered.error).toBeInstanceOf(StorageUnavailableError);
      expect(answered.ms).toBeLessThan(REQUEST_MS + SLACK_MS);
      // Before: the statement waited on for lock_timeout (5 s) after the caller's 503.
      const stopped = performance.now();
      await expect.poll(lockWaiters, { timeout: 2000, interval: 10 }).toBe(0);
      expect(performance.now() - stopped).toBeLessThan(REQUEST_MS);
      // The lock still stands, and the pool's one connection serves another event at once.
      const other = await timed(() => open.reserve(reserveRequest({ eventId: "other" })));
      expect(other.error).toBeUndefined();
      expect(other.ms).toBeLessThan(REQUEST_MS);
    } finally {
      await lock.release();
    }
  });

  it("lets maintenance's statements wait past the request deadline, within their own", async () => {
    pg.require();
    // One connection: the one maintenance used is the one the next request gets.
    register = await PostgresRegister.open(db.url, { poolMax: 1, deadlines: { requestMs: REQUEST_MS } });
    const open = register;
    await open.reserve(reserveRequest({ eventId: "bounded-again" }));
    const counted = await whileMaintenanceWaits(open, async () => {
      // Past the request deadline, the count still waits for the table, where a request's statement is ended.
      await new Promise((resolve) => setTimeout(resolve, 2 * REQUEST_MS));
      expect(await lockWaiters()).toBe(1);
    });
    expect(counted).toBe(0);
    // The longer bound ended with maintenance's transaction: a request's statement is bounded again.
    const row = await frozenHolding(
      "UPDATE inbound_events SET updated_at = updated_at WHERE event_id = 'bounded-again'",
    );
    try {
      await expect(open.reserve(reserveRequest({ eventId: "bounded-again" }))).rejects.toThrow(StorageUnavailableError);
      await expect.poll(lockWaiters, { timeout: 2000, interval: 10 }).toBe(0);
    } finally {
      await row.release();
    }
  });

  it("gives back the leases of a claim that waited past its deadline for a connection, then committed", async () => {
    pg.require();
    // One connection, held by maintenance waiting for a table lock: the claim waits in the pool behind it.
    register = await PostgresRegister.open(db.url, { poolMax: 1, deadlines: { requestMs: REQUEST_MS } });
    const open = register;
    await open.reserve(reserveRequest({ eventId: "claimed-late" }));
    await whileMaintenanceWaits(open, () =>
      expect(open.claim(claimRequest({ leaseMs: 60_000 }))).rejects.toThrow(StorageUnavailableError),
    );
    // The claim ran once it had the connection (its token taken), and its lease went back: no attempt is
    // left open to end as a crash, and the event is due as before. Before, it stayed leased for 60 s.
    const row = () =>
      db.sql`SELECT attempts, lease_owner, lease_token::int AS token FROM inbound_events WHERE event_id = 'claimed-late'`;
    await expect
      .poll(async () => (await row())[0], { timeout: 3000, interval: 20 })
      .toEqual({
        attempts: 0,
        lease_owner: null,
        token: 1,
      });
    expect(await db.sql`SELECT count(*)::int AS n FROM delivery_attempts WHERE event_id = 'claimed-late'`).toEqual([
      { n: 0 },
    ]);
    const only = { sender: "default", eventId: "claimed-late" };
    const [again] = await open.claim(claimRequest({ leaseMs: 60_000, only }));
    expect(again?.record).toMatchObject({ eventId: "claimed-late", attempts: 1, finishedAttempts: 0 });
  });

  it("waits for another instance's migration however long it takes, past the request deadline", async () => {
    pg.require();
    const migrating = await db.sql.reserve();
    await migrating`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    let unlocked = false;
    try {
      const opening = PostgresRegister.open(db.url, { poolMax: 1, deadlines: { requestMs: REQUEST_MS } });
      // Awaited below; a failure before then must fail this case, not surface as unhandled.
      opening.catch(() => {});
      await expect.poll(lockWaiters, { timeout: 2000, interval: 10 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 2 * REQUEST_MS));
      expect(await lockWaiters()).toBe(1);
      await migrating`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
      unlocked = true;
      register = await opening;
      expect(register.link.state).toBe("up");
    } finally {
      if (!unlocked) await migrating`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
      migrating.release();
    }
  });
});
