import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/load-config.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import { readMigrations } from "../../src/register/migrations.ts";
import { openRegister } from "../../src/register/open-register.ts";
import { type RegisterChange, StorageUnavailableError } from "../../src/register/port.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { search } from "../../src/register/postgres/read-statements.ts";
import type { Db } from "../../src/register/postgres/statements.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { changedEventId, describeChange, reserveRequest, SEARCH_INDEXES, T0 } from "../support/records.ts";
import { freePort, tcpProxy } from "../support/tcp-proxy.ts";

/**
 * What only the PostgreSQL backend has: migrations under an advisory lock,
 * synchronous_commit, LISTEN/NOTIFY between instances, "cannot record now"
 * when the server goes away, and its query plans. The contract itself is in
 * conformance/, port by port.
 */

/** One node of EXPLAIN (FORMAT JSON) and the nodes under it. */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

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
    // Every file shipped, each once: the list is the folder's, whatever later migrations add.
    expect(recorded).toEqual(readMigrations("postgres").map(({ version, name }) => ({ version, name })));
    expect(recorded.slice(0, 7)).toEqual([
      { version: 1, name: "0001_register" },
      { version: 2, name: "0002_rate_limit" },
      { version: 3, name: "0003_console" },
      { version: 4, name: "0004_console_sessions" },
      { version: 5, name: "0005_attempt_kind" },
      { version: 6, name: "0006_source_deliveries" },
      { version: 7, name: "0007_write_probe" },
    ]);
    const tables = await db.sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
    expect(tables.map((t) => t.tablename)).toEqual([
      "console_sessions",
      "delivery_attempts",
      "event_replays",
      "inbound_events",
      "rate_limit_windows",
      "register_migrations",
      "register_probe",
      "source_deliveries",
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
    expect(await recorded).toEqual({
      kind: "recorded",
      sender: "default",
      eventId: "from-b",
      status: "PROCESSING",
      remote: true,
    });

    const [claim] = await b.claim({ owner: "worker-b", now: T0, leaseMs: 1000, limit: 1 });
    if (claim === undefined) throw new Error("nothing claimed");
    const settled = nextChange(a, (c) => c.kind === "settled");
    await b.settle(
      claim.lease,
      { status: EventStatus.SUCCEEDED, order: { id: "o", number: "N" }, response: { status: 201, body: "{}" } },
      { startedAt: T0, durationMs: 3, outcome: "delivered" },
      T0 + 5,
    );
    expect(await settled).toEqual({
      kind: "settled",
      sender: "default",
      eventId: "from-b",
      status: "SUCCEEDED",
      remote: true,
    });

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

  it("tells instance A of all 50 events instance B records at once, each once, marked remote", async () => {
    const a = await open();
    const b = await open();
    const ids = Array.from({ length: 50 }, (_, i) => `burst-${i}`);
    const seen = new Map<string, number>();
    const all = new Promise<void>((resolve) => {
      a.watch((change) => {
        if (change.kind !== "recorded" || change.remote !== true) return;
        seen.set(change.eventId, (seen.get(change.eventId) ?? 0) + 1);
        if (seen.size === ids.length) resolve();
      });
    });
    await Promise.all(ids.map((eventId) => b.reserve(reserveRequest({ eventId }))));
    await all;
    // A marker published after the burst: once it arrives, any duplicate would have too.
    const marker = nextChange(a, (c) => changedEventId(c) === "after-burst");
    await b.reserve(reserveRequest({ eventId: "after-burst" }));
    await marker;
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    expect([...seen.keys()].sort()).toEqual([...ids, "after-burst"].sort());
  });

  it("reserves a burst as one batch: each key created once, repeats in and across batches are existing", async () => {
    const a = await open();
    const b = await open();
    const ids = Array.from({ length: 200 }, (_, i) => `batch-${i}`);
    await a.reserve(reserveRequest({ eventId: "batch-7" }));
    // Two instances, the same keys in opposite orders, each key twice on each: no deadlock, one creation each.
    const results = await Promise.all([
      ...ids.flatMap((eventId) => [a.reserve(reserveRequest({ eventId })), a.reserve(reserveRequest({ eventId }))]),
      ...[...ids].reverse().map((eventId) => b.reserve(reserveRequest({ eventId }))),
    ]);
    const created = results.filter((r) => r.outcome === "created").map((r) => r.record.eventId);
    expect(created.sort()).toEqual(ids.filter((id) => id !== "batch-7").sort());
    expect(results.filter((r) => r.outcome === "existing")).toHaveLength(results.length - 199);
    for (const result of results) expect(result.record.fingerprint).toBe("fp-1");
    const rows = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM inbound_events WHERE event_id LIKE 'batch-%'`;
    expect(Number(rows[0]?.n)).toBe(200);
  });

  it("writes the outcomes of one turn in one transaction, each still fenced by its own lease", async () => {
    const a = await open();
    const b = await open();
    const ids = Array.from({ length: 20 }, (_, i) => `settle-batch-${i}`);
    await Promise.all(ids.map((eventId) => a.reserve(reserveRequest({ eventId }))));
    const claims = (
      await Promise.all(
        ids.map((eventId) =>
          a.claim({ owner: "worker-a", now: T0, leaseMs: 60_000, limit: 1, only: { sender: "default", eventId } }),
        ),
      )
    ).flat();
    expect(claims).toHaveLength(20);
    const delivered = {
      status: EventStatus.SUCCEEDED,
      order: { id: "o", number: "N" },
      response: { status: 201, body: "{}" },
    } as const;
    const report = { startedAt: T0, durationMs: 3, outcome: "delivered" } as const;
    // The first one's lease is stale (an older token): its outcome must change nothing, the others' must land.
    // A second instance settles the last five at the same moment, in the opposite key order: no deadlock.
    const mine = claims.slice(0, 15);
    const theirs = claims.slice(15).reverse();
    const settled = await Promise.all([
      ...mine.map((claim, i) =>
        a.settle(i === 0 ? { ...claim.lease, token: claim.lease.token - 1 } : claim.lease, delivered, report, T0 + 5),
      ),
      ...theirs.map((claim) => b.settle(claim.lease, delivered, report, T0 + 5)),
    ]);
    expect(settled[0]).toBeUndefined();
    expect(settled.slice(1).map((record) => record?.status)).toEqual(Array(19).fill("SUCCEEDED"));
    expect((await a.find("default", "settle-batch-0"))?.status).toBe("PROCESSING");

    // Rows written by one transaction carry its id (xmin): one per instance's batch, not one per event.
    const transactions = async (table: "inbound_events" | "delivery_attempts", eventIds: readonly string[]) => {
      const rows = await db.sql<{ n: string }[]>`
        SELECT count(DISTINCT xmin::text) AS n FROM ${db.sql(table)} WHERE event_id IN ${db.sql(eventIds)}`;
      return Number(rows[0]?.n);
    };
    const mineSettled = ids.slice(1, 15);
    const theirsSettled = ids.slice(15);
    expect(await transactions("inbound_events", mineSettled)).toBe(1);
    expect(await transactions("delivery_attempts", mineSettled)).toBe(1);
    expect(await transactions("inbound_events", theirsSettled)).toBe(1);
    expect(await transactions("inbound_events", [...mineSettled, ...theirsSettled])).toBe(2);
  });

  it("listens again after its LISTEN connection is killed", async () => {
    const a = await open();
    const b = await open();
    await db.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE application_name = 'onec-order-gateway listener' AND datname = current_database()`;
    await until(() => !a.hearsOtherInstances());
    await until(() => a.hearsOtherInstances());
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
    // The bound: the first success within 1 s of the server accepting connections again.
    const restored = Date.now();
    await until(
      () =>
        register.ping().then(
          () => true,
          () => false,
        ),
      1000,
    );
    expect(Date.now() - restored).toBeLessThan(1000);
    expect((await register.reserve(reserveRequest({ eventId: "during" }))).outcome).toBe("created");
    // Closing must not hang on a server that went away again: shutdown has its own deadline.
    await proxy.cut();
    const closing = Date.now();
    await register.close();
    expect(Date.now() - closing).toBeLessThan(4000);
  }, 15_000);

  it("pings with a committed write: a database that still answers reads but takes no writes is not ready", async () => {
    const register = await open();
    await register.ping();
    const name = db.sql.unsafe(`"${new URL(db.url).pathname.slice(1)}"`);
    await db.sql`ALTER DATABASE ${name} SET default_transaction_read_only = on`;
    try {
      // New sessions take the setting: the register's connections are made again.
      await db.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = 'onec-order-gateway' AND datname = current_database()`;
      await until(
        () =>
          register.find("default", "any").then(
            () => true,
            () => false,
          ),
        2000,
      );
      await expect(register.ping()).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(register.ping()).rejects.toThrow(/read-only transaction/);
    } finally {
      await db.sql`ALTER DATABASE ${name} RESET default_transaction_read_only`;
    }
  });

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

  it("answers the console's search from one index per key, in its custom and its generic plan", async () => {
    const register = await open();
    // A register with history: 5000 events, two in three delivered (1C's order on them), with statistics.
    await db.sql`
      INSERT INTO inbound_events (sender, event_id, fingerprint, policy_version, status, correlation_id, body,
                                  order_id, order_number, round_started_at, received_at, updated_at)
      SELECT 'shop-' || (i % 5), 'plan-' || i, 'fp', 'v1', CASE WHEN i % 3 = 0 THEN 'PROCESSING' ELSE 'SUCCEEDED' END,
             'corr-' || i,
             json_build_object('event_id', 'plan-' || i, 'order', json_build_object('id', 'A-' || i,
                               'number', (100000 + i)::text))::text,
             CASE WHEN i % 3 = 0 THEN NULL ELSE 'o-' || i END, CASE WHEN i % 3 = 0 THEN NULL ELSE 'N-' || i END, i, i, i
        FROM generate_series(1, 5000) AS i`;
    try {
      await db.sql`ANALYZE inbound_events`;
      // The very statement the register runs, as the driver prepares it; then its plans both ways: the driver
      // keeps prepared statements, and after five runs PostgreSQL may switch to the generic one.
      // describe() only parses it: the register's int8 parser, all that Db adds to this client's type, plays no part.
      const statement = await search(db.sql as unknown as Db, "100007", 50).describe();
      const args = statement.types.map((type) => (type === 20 ? "50" : "'100007'")).join(", ");
      const plans = await db.sql.begin(async (tx) => {
        await tx.unsafe(`PREPARE console_search AS ${statement.string}`);
        const explained: PlanNode[] = [];
        for (const mode of ["force_custom_plan", "force_generic_plan"]) {
          await tx.unsafe(`SET LOCAL plan_cache_mode = ${mode}`);
          const [row] = await tx.unsafe<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(
            `EXPLAIN (FORMAT JSON) EXECUTE console_search(${args})`,
          );
          if (row === undefined) throw new Error("EXPLAIN returned nothing");
          explained.push(row["QUERY PLAN"][0].Plan);
        }
        // Prepared statements outlive the transaction: leave the pooled connection as it was.
        await tx.unsafe("DEALLOCATE console_search");
        return explained;
      });
      for (const plan of plans) {
        const nodes = planNodes(plan);
        expect(nodes.filter((node) => node["Node Type"] === "Seq Scan")).toEqual([]);
        expect(nodes.map((node) => node["Node Type"])).toContain("BitmapOr");
        const used = nodes.flatMap((node) => node["Index Name"] ?? []);
        expect(used.sort()).toEqual(SEARCH_INDEXES.postgres);
      }
      // The plan is of the statement that finds: the site's order number of the seventh event.
      expect((await register.search("100007", 50)).map((r) => r.eventId)).toEqual(["plan-7"]);
    } finally {
      await db.sql`DELETE FROM inbound_events WHERE event_id LIKE 'plan-%'`;
    }
  });
});
