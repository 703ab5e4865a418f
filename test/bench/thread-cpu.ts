import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { START_ENTRY, startNodeFlags } from "../support/start-script.ts";
import { BENCH_SENDER_TOKEN, orderPaidBodies, type Requests, runLoad } from "./load.ts";
import { createBenchDatabase, DEFAULT_BENCH_PG_URL } from "./postgres-database.ts";
import { type Server, startServer, stopAll } from "./processes.ts";
import { prebuilt, SHOPIFY_PATH, shopifyOrders, writeSourcesFile } from "./webhook-load.ts";

/**
 * `npm run bench:threads` (Linux): the CPU each thread of the gateway spends
 * per request, read from /proc/<pid>/task/<tid>/stat around a measured load,
 * with no profiler in the process to slow it. New native events and new
 * Shopify orders, each on a gateway of its own with the webhook scenario's
 * settings, in alternating rounds. It says where a path's cost lands: the
 * main thread, the register's writer thread, V8's garbage-collector helpers.
 *
 * BENCH_AGAINST=<another checkout, built> loads that checkout's dist/main.js
 * too, path by path in the same alternating rounds: a change's cost or gain,
 * before against after, on one machine at one time. BENCH_PATHS picks the
 * paths (default native,webhook); `bare`, `full` and `normal` add the bare
 * Fastify server and the hand-written FULL and NORMAL peers (peers/), loaded
 * with the native path's bodies: what the gateway's CPU per event is set
 * against. BENCH_DATABASE=postgres puts every gateway on a fresh PostgreSQL
 * database (BENCH_PG_URL's server) instead of a SQLite file.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AGAINST = process.env.BENCH_AGAINST;
const PATHS = (process.env.BENCH_PATHS ?? "native,webhook").split(",");
const ON_POSTGRES = process.env.BENCH_DATABASE === "postgres";
const SECONDS = 5;
const LOAD = { connections: 50, durationSeconds: SECONDS };
/** Clock ticks per second of /proc's utime and stime. */
const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** CPU ticks per thread kind: the main thread by its id, the others by the name Node and V8 give them. */
function threadTicks(pid: number): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    // After the name: state is field 3, utime 14 and stime 15 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const kind = tid === String(pid) ? "main" : (THREAD_KINDS[name] ?? name);
    ticks.set(kind, (ticks.get(kind) ?? 0) + Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

const THREAD_KINDS: Record<string, string> = {
  WorkerThread: "writer thread",
  V8Worker: "V8 helpers (GC)",
  "libuv-worker": "libuv pool",
};

async function measure(server: Server, requests: Requests): Promise<{ perSecond: number; cpu: Map<string, number> }> {
  const pid = server.child.pid ?? 0;
  await runLoad([server.url], { ...LOAD, durationSeconds: 1 }, requests);
  const before = threadTicks(pid);
  const run = await runLoad([server.url], LOAD, requests);
  const after = threadTicks(pid);
  if (run.unexpected > 0)
    throw new Error(`${server.name}: ${run.unexpected} answers other than ${requests.expectedStatus}`);
  const count = run.result.requests.total;
  const cpu = new Map<string, number>();
  for (const [kind, ticks] of after) cpu.set(kind, (((ticks - (before.get(kind) ?? 0)) / TICKS) * 1e6) / count);
  return { perSecond: count / SECONDS, cpu };
}

const dir = mkdtempSync(join(tmpdir(), "gateway-bench-threads-"));
const sourcesFile = writeSourcesFile(dir);
const databases: { drop(): Promise<void> }[] = [];
async function databaseUrl(name: string): Promise<string> {
  if (!ON_POSTGRES) return join(dir, `${name}.db`);
  const database = await createBenchDatabase(process.env.BENCH_PG_URL || DEFAULT_BENCH_PG_URL);
  databases.push(database);
  return database.url;
}

const gateway = async (name: string, checkout = ".") =>
  startServer(
    {
      name,
      script: join(checkout, START_ENTRY),
      nodeArgs: startNodeFlags(),
      env: {
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: await databaseUrl(name),
        // Never called: DELIVERER=off, as in the webhook scenario.
        ONEC_URL: "http://127.0.0.1:9",
        DELIVERER: "off",
        SYNC_WAIT_MS: "0",
        LOG_LEVEL: "info",
        RATE_LIMIT_MAX: "0",
        SENDER_TOKENS: `bench:${BENCH_SENDER_TOKEN}`,
        SOURCES_FILE: sourcesFile,
      },
      listeningUrl: (line) => /"msg":"Server listening at (\S+?)"/.exec(line)?.[1],
    },
    dir,
  );

/** The servers the gateway is set against, loaded with the native path's new events. */
const others: Record<string, { script: string; env: Record<string, string>; status: number }> = {
  bare: { script: "test/bench/bare-server.ts", env: {}, status: 201 },
  full: { script: "test/bench/peers/handwritten.ts", env: { SYNCHRONOUS: "FULL" }, status: 201 },
  normal: { script: "test/bench/peers/handwritten.ts", env: { SYNCHRONOUS: "NORMAL" }, status: 201 },
};

const other = async (name: string) => {
  const spec = others[name];
  if (spec === undefined) return undefined;
  const server = await startServer(
    {
      name: `threads-${name}`,
      script: spec.script,
      env: { PORT: "0", SENDER_TOKEN: BENCH_SENDER_TOKEN, DATABASE_PATH: join(dir, `${name}.db`), ...spec.env },
      listeningUrl: (line) => /^(?:bare server|peer) listening on (\S+)/.exec(line)?.[1],
    },
    dir,
  );
  return { server, expectedStatus: spec.status };
};

try {
  const nextOrder = shopifyOrders();
  const requestsOf: Record<string, () => Requests> = {
    native: () => ({ nextBody: orderPaidBodies(`threads-${Date.now()}`), expectedStatus: 202 }),
    // Built ahead of each run and never sent twice: a repeat answers 202 as well (DELIVERER=off), so a
    // pool taken round and round would pass for new orders while the writer thread wrote nothing.
    webhook: () => prebuilt(nextOrder, SHOPIFY_PATH, 202),
  };
  const paths: { name: string; server: Server; requests: Requests }[] = [];
  for (const path of PATHS) {
    const peer = await other(path);
    if (peer !== undefined) {
      const requests = {
        nextBody: orderPaidBodies(`threads-${path}-${Date.now()}`),
        expectedStatus: peer.expectedStatus,
      };
      paths.push({ name: path, server: peer.server, requests });
      continue;
    }
    const requests = requestsOf[path];
    if (requests === undefined)
      throw new Error(`BENCH_PATHS: no path "${path}" (native, webhook, ${Object.keys(others).join(", ")})`);
    paths.push({ name: path, server: await gateway(`threads-${path}`), requests: requests() });
    if (AGAINST !== undefined)
      paths.push({ name: `${path}*`, server: await gateway(`against-${path}`, AGAINST), requests: requests() });
  }
  if (AGAINST !== undefined) console.log(`* ${AGAINST}'s build`);
  console.log(`CPU per request by thread, µs (${ROUNDS} rounds of ${SECONDS} s, 50 connections, new events only)`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { name, server, requests } of paths) {
      const { perSecond, cpu } = await measure(server, requests);
      const threads = [...cpu].filter(([, us]) => us >= 1).sort((a, b) => b[1] - a[1]);
      const total = threads.reduce((sum, [, us]) => sum + us, 0);
      const shown = threads.map(([kind, us]) => `${kind} ${us.toFixed(0)}`).join(", ");
      console.log(
        `  round ${round} ${name.padEnd(8)} ${perSecond.toFixed(0).padStart(5)} req/s  total ${total.toFixed(0)}: ${shown}`,
      );
    }
  }
} finally {
  await stopAll();
  for (const database of databases) await database.drop();
  rmSync(dir, { recursive: true, force: true });
}
