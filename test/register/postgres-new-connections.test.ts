import { createServer, type Server, Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import { arrayLiteral } from "../../src/register/postgres/array-literal.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { reserveRequest } from "../support/records.ts";
import { listenAsRelay } from "../support/tcp-proxy.ts";

/**
 * What the register's pool does on a new connection, and when the server
 * drops one just after saying it is ready, as a restarting server does. By
 * default postgres.js asks every new connection for the server's array types
 * and leaves that query's failure unhandled (connection.js: `return
 * fetchArrayTypes()`): the reset became an unhandled rejection, which ends a
 * Node process. The pool asks nothing of its own; arrays go as literals.
 */

const pg = postgresForTests();

/** PostgreSQL's ReadyForQuery message: 'Z', length 5, the transaction status. */
const READY_FOR_QUERY = 0x5a;

/**
 * A relay to the server that, once armed, resets each new connection at the
 * first bytes the client sends after the server's first ReadyForQuery: the
 * moment a connection is open and its first query goes out.
 */
async function resettingProxy(
  target: URL,
): Promise<{ url: string; arm(): void; disarm(): void; resets(): number; close(): void }> {
  let armed = false;
  let resets = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    const resetAfterReady = armed;
    let ready = false;
    let pending = Buffer.alloc(0);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    upstream.connect(Number(target.port || 5432), target.hostname);
    upstream.on("data", (chunk: Buffer) => {
      client.write(chunk);
      if (ready) return;
      // Messages are a type byte and a 4-byte length that counts itself; the startup reply is all typed.
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 1 + length) break;
        if (pending[0] === READY_FOR_QUERY) ready = true;
        pending = pending.subarray(1 + length);
      }
    });
    client.on("data", (chunk: Buffer) => {
      if (ready && resetAfterReady) {
        resets++;
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const url = await listenAsRelay(server, target);
  return {
    url,
    arm: () => {
      armed = true;
      // Open connections are dropped too: the next call needs a new one.
      for (const socket of sockets) socket.destroy();
    },
    disarm: () => {
      armed = false;
    },
    resets: () => resets,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe.skipIf(!pg.enabled)("PostgresRegister's new connections", () => {
  let db: TestDatabase;
  let proxy: Awaited<ReturnType<typeof resettingProxy>> | undefined;
  let register: PostgresRegister | undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    const created = await pg.database();
    if (created !== undefined) db = created;
    process.on("unhandledRejection", onUnhandled);
  });
  afterEach(async () => {
    proxy?.close();
    await register?.close();
    unhandled.length = 0;
  });
  afterAll(async () => {
    process.off("unhandledRejection", onUnhandled);
    await db?.drop();
  });

  it("fails a call as 'cannot accept now' when the server drops a connection just as it opens, and leaves nothing unhandled", async () => {
    pg.require();
    proxy = await resettingProxy(new URL(db.url));
    register = await PostgresRegister.open(proxy.url, {
      poolMax: 2,
      connectTimeoutSeconds: 1,
      deadlines: { requestMs: 500, probeEveryMs: 50 },
    });
    await register.reserve(reserveRequest({ eventId: "before" }));

    proxy.arm();
    await expect(register.find("default", "before")).rejects.toBeInstanceOf(StorageUnavailableError);
    // The register has found the database lost; its probe opens new connections, each reset as it opens.
    await expect.poll(() => proxy?.resets(), { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    // Each reset reaches the client over loopback at once, as I/O for the loop's next poll phase, and an
    // unhandled rejection is reported after the turn it happened in: a few turns of the loop see both.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled.map(String)).toEqual([]);

    proxy.disarm();
    await expect
      .poll(async () => (await register?.find("default", "before").catch(() => undefined))?.eventId)
      .toBe("before");
  });

  it("sends arrays as literals that read back element for element, whatever the text holds", async () => {
    pg.require();
    const values = ['a"b', "c\\d", "{x,y}", "NULL", "", " spaced ", "line\nbreak", "ключ", null, "a,b"];
    // Read back as the register reads them, through unnest: one row per element, NULL as NULL.
    const rows = await db.sql<{ v: string | null }[]>`
      SELECT v FROM unnest(${arrayLiteral(values)}::text[]) WITH ORDINALITY AS t(v, ord) ORDER BY ord`;
    expect(rows.map((row) => row.v)).toEqual(values);
    const numbers = await db.sql<{ n: number | null }[]>`
      SELECT n::float8 AS n FROM unnest(${arrayLiteral([1, null, 1796313258010])}::bigint[]) WITH ORDINALITY AS t(n, ord)
       ORDER BY ord`;
    expect(numbers.map((row) => row.n)).toEqual([1, null, 1796313258010]);
  });
});
