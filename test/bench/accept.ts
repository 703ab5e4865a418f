import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { type Measured, printTable, verdict } from "./accept-report.ts";
import { cpuProfileArgs, measuredLoad, summarizeProfiles } from "./cpu-profile.ts";
import { runDrain } from "./drain.ts";
import { BENCH_SENDER_TOKEN, type LoadSettings, orderPaidBodies, runLoad } from "./load.ts";
import {
  type BenchDatabase,
  createBenchDatabase,
  DEFAULT_BENCH_PG_URL,
  describeServer,
  dropAllBenchDatabases,
  unreachable,
} from "./postgres-database.ts";
import { sampleWaits } from "./postgres-waits.ts";
import { emulatorSpec, type Server, type ServerSpec, startServer, stopAll, stopServer } from "./processes.ts";

/**
 * `npm run bench`, and the accept scenarios: requests/s and latency of the
 * gateway's accept path next to a bare Fastify server, same machine, same run,
 * same load; on SQLite, and on PostgreSQL with one gateway and with three
 * sharing one database. Then, unless BENCH_SCENARIOS says otherwise, the drain
 * scenarios (drain.ts). The ratios are the numbers to watch; the absolute
 * figures depend on the machine. See README.md.
 */

const WARMUP_SECONDS = 2;
const LOG_LEVEL = "info"; // the production default: its per-request log lines are part of the real cost
const TMPFS_MAGIC = 0x01021994;
/** Gateways sharing one PostgreSQL database in the accept-pg scenario's second row. */
const POSTGRES_INSTANCES = [1, 3] as const;

/** Where a gateway row keeps its register. */
type Register = { kind: "sqlite"; path: string } | { kind: "postgres"; database: BenchDatabase };

const SCENARIOS = ["accept", "accept-pg", "drain", "drain-pg"] as const;
type Scenario = (typeof SCENARIOS)[number];
const POSTGRES_SCENARIOS: readonly Scenario[] = ["accept-pg", "drain-pg"];

const scenariosNamed = Boolean(process.env.BENCH_SCENARIOS);
const scenarios = scenarioList("BENCH_SCENARIOS", SCENARIOS.join(","));
const drainEvents = positiveInt("BENCH_DRAIN_EVENTS", 10_000);
const settings: LoadSettings = {
  connections: positiveInt("BENCH_CONNECTIONS", 50),
  durationSeconds: positiveInt("BENCH_DURATION", 10),
};
const postgresServer = process.env.BENCH_PG_URL || DEFAULT_BENCH_PG_URL;
const dir = mkdtempSync(join(process.env.BENCH_TMPDIR || os.tmpdir(), "gateway-bench-"));
// Outside `dir`, which goes at the end: the profiles are the point of the run.
const profileDir =
  process.env.BENCH_PROFILE === "1" ? mkdtempSync(join(os.tmpdir(), "gateway-bench-profiles-")) : undefined;

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= stopAll()
    .then(dropAllBenchDatabases)
    .finally(() => rmSync(dir, { recursive: true, force: true }));
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}
// A reader gone (`npm run bench | head`) would crash the bench on its next line and orphan the children.
process.stdout.once("error", () => void cleanup().finally(() => process.exit(1)));

try {
  process.exitCode = (await main()) ? 0 : 1;
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
if (profileDir !== undefined) {
  summarizeProfiles(profileDir);
  console.log("");
  console.log(`CPU profiles: ${profileDir}`);
}

async function main(): Promise<boolean> {
  let ok = await postgresAnswers();
  printSetup();
  if (scenarios.has("accept") || scenarios.has("accept-pg")) ok = (await acceptScenarios()) && ok;
  await stopAll(); // each scenario gets the machine to itself
  if (scenarios.has("drain")) {
    console.log("");
    ok = (await runDrain({ events: drainEvents, dir, ...profiling() })) && ok;
  }
  if (scenarios.has("drain-pg")) {
    console.log("");
    ok = (await runDrain({ events: drainEvents, dir, postgres: postgresServer, ...profiling() })) && ok;
  }
  return ok;
}

/**
 * Without a server the PostgreSQL scenarios are left out, in one line: a
 * failure when BENCH_SCENARIOS named them, a skip when they came by default.
 */
async function postgresAnswers(): Promise<boolean> {
  const asked = POSTGRES_SCENARIOS.filter((scenario) => scenarios.has(scenario));
  if (asked.length === 0) return true;
  const why = await unreachable(postgresServer);
  if (why === undefined) return true;
  for (const scenario of asked) scenarios.delete(scenario);
  const line = `${asked.join(", ")} ${scenariosNamed ? "FAILED" : "skipped"}: no PostgreSQL server answers at ${describeServer(postgresServer)} (BENCH_PG_URL): ${why}`;
  if (scenariosNamed) console.error(line);
  else console.log(line);
  return !scenariosNamed;
}

function profiling(): { profileDir?: string } {
  return profileDir === undefined ? {} : { profileDir };
}

/** One table: the bare server once, then each gateway row in turn, each stopped before the next starts. */
async function acceptScenarios(): Promise<boolean> {
  const bare = await startServer(bareSpec(), dir);
  const onec = await startServer(emulatorSpec(), dir);

  // One generator for every server: the same bytes on the wire, ids never repeat across runs.
  const nextBody = orderPaidBodies(`${Date.now().toString(36)}-${process.pid}`);
  const measured: Measured[] = [await measure("bare", [bare], nextBody)];
  await stopServer(bare.child); // idle, but its own process: the gateways get the machine without it
  if (scenarios.has("accept")) {
    measured.push(
      await measureGateways("gateway", 1, { kind: "sqlite", path: join(dir, "gateway.db") }, onec, nextBody),
    );
  }
  if (scenarios.has("accept-pg")) {
    for (const instances of POSTGRES_INSTANCES) {
      // A database per row: the three-instance row must not start on the first row's rows and backlog.
      const database = await createBenchDatabase(postgresServer);
      const name = instances === 1 ? "gateway-pg" : `gateway-pg-x${instances}`;
      measured.push(await measureGateways(name, instances, { kind: "postgres", database }, onec, nextBody));
      await database.drop();
    }
  }

  printTable(measured);
  return verdict(measured);
}

/** Starts `instances` gateways on one register, loads them together, stops them: their delivery backlog goes too. */
async function measureGateways(
  name: string,
  instances: number,
  register: Register,
  onec: Server,
  nextBody: () => string,
): Promise<Measured> {
  const names = Array.from({ length: instances }, (_, i) => (instances === 1 ? name : `${name}-${i + 1}`));
  const servers = await Promise.all(names.map((each) => startServer(gatewaySpec(each, onec.url, register), dir)));
  try {
    return await measure(name, servers, nextBody, register);
  } finally {
    await Promise.all(servers.map((server) => stopServer(server.child)));
  }
}

async function measure(
  name: string,
  servers: readonly Server[],
  nextBody: () => string,
  register?: Register,
): Promise<Measured> {
  const urls = servers.map((server) => server.url);
  const across = servers.length === 1 ? "" : ` across ${servers.length} instances`;
  process.stdout.write(
    `running ${name}${across}: ${WARMUP_SECONDS} s warm-up, ${settings.durationSeconds} s measured...\n`,
  );
  // The warm-up lets the JIT, the database's caches and keep-alive sockets settle; it is not reported.
  const warmup = await runLoad(urls, { ...settings, durationSeconds: WARMUP_SECONDS }, nextBody);
  const sampler =
    profileDir !== undefined && register?.kind === "postgres"
      ? sampleWaits(postgresServer, register.database.name)
      : undefined;
  const result = await measuredLoad(() => runLoad(urls, settings, nextBody));
  const waits = await sampler?.stop();
  return { name, servers, warmup, result, ...(waits === undefined ? {} : { waits }) };
}

function bareSpec(): ServerSpec {
  return {
    name: "bare",
    script: "test/bench/bare-server.ts",
    env: { PORT: "0" },
    listeningUrl: (line) => line.match(/^bare server listening on (\S+)/)?.[1],
  };
}

function gatewaySpec(name: string, onecUrl: string, register: Register): ServerSpec {
  return {
    name,
    script: "src/main.ts",
    nodeArgs: cpuProfileArgs(profileDir, name),
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: register.kind === "sqlite" ? register.path : register.database.url,
      ONEC_URL: onecUrl,
      SYNC_WAIT_MS: "0",
      LOG_LEVEL,
      SENDER_TOKENS: `bench:${BENCH_SENDER_TOKEN}`,
      // One sender at full speed: the limiter runs (its cost counts) but never refuses.
      RATE_LIMIT_MAX: "1000000",
    },
    listeningUrl: gatewayListeningUrl,
  };
}

/** Fastify's pino line: {"msg":"Server listening at http://127.0.0.1:PORT", ...}. */
function gatewayListeningUrl(line: string): string | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const { msg } = JSON.parse(line) as { msg?: unknown };
    return typeof msg === "string" ? msg.match(/^Server listening at (\S+)/)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

function printSetup(): void {
  const cpus = os.cpus();
  console.log(`machine: node ${process.version}, ${cpus.length} CPUs, ${cpus[0]?.model ?? "unknown CPU"}`);
  console.log(`scenarios: ${[...scenarios].join(", ")}`);
  // On tmpfs an fsync is free, and the gateway's main cost would vanish from the numbers.
  const onTmpfs = statfsSync(dir).type === TMPFS_MAGIC;
  console.log(`database dir: ${dir}${onTmpfs ? " (tmpfs: fsync costs nothing, gateway figures are optimistic)" : ""}`);
  if (scenarios.has("accept-pg") || scenarios.has("drain-pg")) {
    console.log(
      `PostgreSQL: ${describeServer(postgresServer)} (BENCH_PG_URL), a new database per run, dropped after it`,
    );
  }
  if (profileDir !== undefined) {
    console.log(
      `BENCH_PROFILE=1: gateways and drain workers run with --cpu-prof (slower than without), ` +
        `PostgreSQL's waits sampled during the measured runs`,
    );
  }
  if (!scenarios.has("accept") && !scenarios.has("accept-pg")) return;
  console.log(
    `accept load: autocannon, ${settings.connections} connections, ${settings.durationSeconds} s measured ` +
      `after ${WARMUP_SECONDS} s warm-up per row, a new event_id in every request; ` +
      `several gateways share the connections round-robin`,
  );
  console.log(
    `accept gateway: SYNC_WAIT_MS=0 (202 after the durable commit), SQLite journal_mode=WAL synchronous=FULL, ` +
      `PostgreSQL synchronous_commit=on, LOG_LEVEL=${LOG_LEVEL} (stdout to a file), ` +
      `background delivery to the 1C emulator in its own process`,
  );
  console.log("");
}

/** A comma-separated subset of SCENARIOS; they always run in SCENARIOS order. */
function scenarioList(name: string, fallback: string): Set<Scenario> {
  const raw = process.env[name] || fallback;
  const asked = raw.split(",").map((item) => item.trim());
  const unknown = asked.filter((item) => !(SCENARIOS as readonly string[]).includes(item));
  if (unknown.length > 0) {
    throw new Error(`${name} must be a comma-separated list of ${SCENARIOS.join(", ")}, got "${raw}"`);
  }
  return new Set(SCENARIOS.filter((scenario) => asked.includes(scenario)));
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}
