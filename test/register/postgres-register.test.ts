import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/load-config.ts";
import { EventStatus } from "../../src/register/event-status.ts";
import { openRegister } from "../../src/register/open-register.ts";
import { type RegisterChange, StorageUnavailableError } from "../../src/register/port.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { changedEventId, describeChange, reserveRequest, T0 } from "../support/records.ts";
import { freePort, tcpProxy } from "../support/tcp-proxy.ts";

/**
 * What only the PostgreSQL backend has: migrations under an advisory lock,
 * synchronous_commit, LISTEN/NOTIFY between instances, and "cannot record
 * now" when the server goes away. The contract itself is in register.test.ts.
 */

const pg = postgresForTests();

/** Resolves with the first change `register` tells its watchers that matches, or fails after `ms`. */
function nextChange(
  register: PostgresRegister,
  matches: (change: RegisterChange) => boolean,
  ms = 5000,
): Promise<RegisterChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no matching change within ${ms} ms`));
    }, ms);
    const stop = register.watch((change) => {
      if (!matches(change)) return;
      clearTimeout(timer);
      stop();
      resolve(change);
    });
  });
}

async function until(condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!pg.enabled)("PostgresRegister", () => {
  let db: TestDatabase;
  const opened: PostgresRegister[] = [];

  async function open(url = db.url): Promise<PostgresRegister> {
    const register = await PostgresRegister.open(url, { poolMax: 4, connectTimeoutSeconds: 2 });
    opened.push(register);
    return register;
  }

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
  });
  // Under PG_REQUIRED=1 without a server, every test fails on its own.
  beforeEach(() => pg.require());
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("applies its migrations once when several instances start at once, and records them", async () => {
    await Promise.all(Array.from({ length: 5 }, () => open()));
    const recorded = await db.sql`SELECT version, name FROM register_migrations ORDER BY version`;
    expect(recorded).toEqual([
      { version: 1, name: "0001_register" },
      { version: 2, name: "0002_rate_limit" },
    ]);
    const tables = await db.sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
    expect(tables.map((t) => t.tablename)).toEqual([
      "delivery_attempts",
      "event_replays",
      "inbound_events",
      "rate_limit_windows",
      "register_migrations",
    ]);
  });

  it("commits with synchronous_commit on, even where the database default is off", async () => {
    await db.sql.unsafe(`ALTER DATABASE "${new URL(db.url).pathname.slice(1)}" SET synchronous_commit = off`);
    try {
      const register = await open();
      expect(await register.durability()).toEqual({ synchronousCommit: "on" });
    } finally {
      await db.sql.unsafe(`ALTER DATABASE "${new URL(db.url).pathname.slice(1)}" RESET synchronous_commit`);
    }
  });

  it("wakes a watcher on instance A when instance B records or settles an event, once each", async () => {
    const a = await open();
    const b = await open();
    const seen: string[] = [];
    a.watch((change) => seen.push(describeChange(change)));

    const recorded = nextChange(a, (c) => c.kind === "recorded" && c.eventId === "from-b");
    await b.reserve(reserveRequest({ eventId: "from-b" }));
    expect(await recorded).toEqual({ kind: "recorded", sender: "default", eventId: "from-b", status: "PROCESSING" });

    const [claim] = await b.claim({ owner: "worker-b", now: T0, leaseMs: 1000, limit: 1 });
    if (claim === undefined) throw new Error("nothing claimed");
    const settled = nextChange(a, (c) => c.kind === "settled");
    await b.settle(
      claim.lease,
      { status: EventStatus.SUCCEEDED, order: { id: "o", number: "N" }, response: { status: 201, body: "{}" } },
      { startedAt: T0, durationMs: 3, outcome: "delivered" },
      T0 + 5,
    );
    expect(await settled).toEqual({ kind: "settled", sender: "default", eventId: "from-b", status: "SUCCEEDED" });

    // A's own change reaches A's watcher at the commit, and its echo over LISTEN is not told again.
    await a.reserve(reserveRequest({ eventId: "from-a" }));
    const echoOfB = nextChange(a, (c) => changedEventId(c) === "from-b-2");
    await b.reserve(reserveRequest({ eventId: "from-b-2" }));
    await echoOfB;
    expect(seen).toEqual([
      "recorded from-b PROCESSING",
      "settled from-b SUCCEEDED",
      "recorded from-a PROCESSING",
      "recorded from-b-2 PROCESSING",
    ]);
  });

  it("listens again after its LISTEN connection is killed", async () => {
    const a = await open();
    const b = await open();
    await db.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE application_name = 'onec-order-gateway listener' AND datname = current_database()`;
    await until(() => !a.listening);
    await until(() => a.listening);
    const woken = nextChange(a, (c) => changedEventId(c) === "after-reconnect");
    await b.reserve(reserveRequest({ eventId: "after-reconnect" }));
    expect((await woken).kind).toBe("recorded");
  });

  it("answers StorageUnavailableError while the server is unreachable, records nothing, and recovers", async () => {
    const proxy = await tcpProxy(new URL(db.url));
    const register = await open(proxy.url);
    expect((await register.reserve(reserveRequest({ eventId: "before" }))).outcome).toBe("created");

    await proxy.cut();
    await expect(register.reserve(reserveRequest({ eventId: "during" }))).rejects.toBeInstanceOf(
      StorageUnavailableError,
    );
    await expect(register.ping()).rejects.toBeInstanceOf(StorageUnavailableError);
    const direct = await open();
    expect(await direct.find("default", "during")).toBeUndefined();

    await proxy.restore();
    await register.ping();
    expect((await register.reserve(reserveRequest({ eventId: "during" }))).outcome).toBe("created");
    // Closing must not hang on a server that went away again: shutdown has its own deadline.
    await proxy.cut();
    const closing = Date.now();
    await register.close();
    expect(Date.now() - closing).toBeLessThan(4000);
  }, 15_000);

  it("through the factory: a server that answers but has no such database is a configuration error", async () => {
    const missing = new URL(db.url);
    missing.pathname = "/gateway_test_no_such_database";
    await expect(openRegister({ kind: "postgres", url: missing.toString() }, { poolMax: 1 })).rejects.toThrow(
      ConfigError,
    );
    await expect(openRegister({ kind: "postgres", url: missing.toString() }, { poolMax: 1 })).rejects.toThrow(
      /^DATABASE_URL: .*\/gateway_test_no_such_database refused: .*does not exist/,
    );
  });

  it("fails to open with StorageUnavailableError when nothing listens at the address", async () => {
    const closed = await freePort();
    await expect(
      PostgresRegister.open(`postgres://postgres@127.0.0.1:${closed}/x`, { poolMax: 1, connectTimeoutSeconds: 1 }),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
