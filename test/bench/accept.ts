import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { START_ENTRY, startNodeFlags } from "../support/start-script.ts";
import { type Measured, printTable, RSS_GOAL, tableGoals, verdict } from "./accept-report.ts";
import { cpuProfileArgs, measuredLoad, summarizeProfiles } from "./cpu-profile.ts";
import { type DrainGoal, type DrainOutcome, runDrain } from "./drain.ts";
import { recordEvents, recordFinishedEvents } from "./finished-events.ts";
import { type GoalLine, printGoals, type RatioGoal, ratioLine } from "./goals.ts";
import {
  BENCH_SENDER_TOKEN,
  conflictingBodies,
  type LoadSettings,
  orderPaidBodies,
  type Requests,
  repeatingBodies,
  runLoad,
} from "./load.ts";
import { resetEmulator } from "./onec-posts.ts";
import { DEFAULT_BENCH_REDIS_URL, deleteKeys, redisUnreachable } from "./peers/redis.ts";
import {
  type PeerGoal,
  type PeersReport,
  peerGoalLines,
  peersVerdict,
  printPeers,
  WORKLOAD_TITLES,
} from "./peers/report.ts";
import { type Contender, type RoundSettings, runRounds, WORKLOADS } from "./peers/rounds.ts";
import {
  type BenchDatabase,
  createBenchDatabase,
  DEFAULT_BENCH_PG_URL,
  describeServer,
  dropAllBenchDatabases,
  unreachable,
} from "./postgres-database.ts";
import { sampleWaits } from "./postgres-waits.ts";
import { emulatorSpec, type Server, type ServerSpec, startServer, stopAll, stopServer, tail } from "./processes.ts";
import { sampleRss } from "./rss.ts";
import { measureSyncOverhead } from "./sync-overhead.ts";
import { printWebhookSetup, webhookScenario } from "./webhook.ts";
import { writeSourcesFile } from "./webhook-load.ts";

/**
 * `npm run bench`: the gateway next to baselines measured on the same
 * machine in the same run, each scenario with the machine to itself. The
 * ratios are the numbers to watch (the absolute figures depend on the
 * machine); a summary at the end sets each against its goal. See docs/performance.md.
 *
 * One table of requests/s and latency under autocannon (50 connections, a
 * new process per row, the rate limiter off), every row against the same
 * bare Fastify server (bare-server.ts), measured first:
 *   accept      gateway         new events, delivery in the same process (the default)  goal ≥ 0.30 of bare
 *   accept-off  gateway-off     new events, DELIVERER=off: the gateway only accepts     goal ≥ 0.50
 *   replay      gateway-replay  every request repeats one of BENCH_REPLAY_EVENTS events
 *                               already SUCCEEDED (recorded through the gateway first,
 *                               not measured), each answered 200                        goal ≥ 0.70
 *   accept-pg   gateway-pg      new events on PostgreSQL, one gateway, and three sharing
 *               gateway-pg-x3   one database (no goal)
 * Each row also reports its processes' peak resident memory (goal ≤ 200 MB).
 * Then:
 *   peers       the gateway (DELIVERER=off) and what a user could use instead, each in its
 *               own process, loaded in turn in short rounds (peers/rounds.ts): a hand-written
 *               Fastify + better-sqlite3 handler with synchronous=FULL and with NORMAL
 *               (peers/handwritten.ts), @node-idempotency/core on Redis (peers/library.ts);
 *               new events, repeats of a finished event, the 409 case. Goals: new events
 *               ≥ 2.5× hand-written FULL and ≥ 1× NORMAL, repeats ≥ 1.2× FULL
 *   webhook     new Shopify orders through the platform's webhook (each a new order, signed)
 *               next to new events through the native endpoint, two gateways with
 *               accept-off's settings loaded in turn in short rounds; repeats of each too.
 *               Goal: new orders ≥ 0.8 of the native endpoint's req/s
 *   sync        a new event answered 201 once delivered (SYNC_WAIT_MS=2000), one request
 *               at a time, less a direct POST to the 1C emulator (sync-overhead.ts):
 *               goal ≤ 2 ms at p50
 *   drain       a backlog drained to the emulator, next to raw undici POSTs (drain.ts):
 *               goal ≥ 0.30 at ONEC_MAX_CONCURRENCY=16 (stretch 0.50)
 *   drain-pg    the same on PostgreSQL, one worker and two (no goal)
 */

const WARMUP_SECONDS = 2;
const LOG_LEVEL = "info"; // the production default: its per-request log lines are part of the real cost
const TMPFS_MAGIC = 0x01021994;
/** Gateways sharing one PostgreSQL database in the accept-pg scenario's second row. */
const POSTGRES_INSTANCES = [1, 3] as const;
/** The sync scenario's wait for 1C: the production default, far above an emulator's answer. */
const SYNC_WAIT_MS = 2000;
/** How long the replay row's recorded events may take to be delivered before the run gives up. */
const REPLAY_SETTLE_LIMIT_MS = 60_000;

/** Of the issue: the ratios to each row's baseline, and the sync overhead at p50. */
const GOALS = {
  accept: { atLeast: 0.3 },
  acceptOff: { atLeast: 0.5 },
  replay: { atLeast: 0.7 },
  drain: { concurrency: 16, ratio: { atLeast: 0.3, stretch: 0.5 } },
  syncP50Ms: 2,
  peers: [
    { workload: "new", peer: "handwritten-full", goal: { atLeast: 2.5 } },
    { workload: "new", peer: "handwritten-normal", goal: { atLeast: 1 } },
    { workload: "repeat", peer: "handwritten-full", goal: { atLeast: 1.2 } },
  ],
  webhook: [{ workload: "new", peer: "native", goal: { atLeast: 0.8 } }],
} as const satisfies Record<string, RatioGoal | DrainGoal | number | readonly PeerGoal<string>[]>;

/** What each row's requests make the server do: the legend under the table and the goals' summary. */
const WORK = {
  bare: "bare Fastify: parse the JSON body, answer 201",
  accept: "new events, delivery in the same process (the gateway's default)",
  acceptOff: "new events, DELIVERER=off (the gateway only accepts; delivery would be another process)",
  replay: "repeats of a finished event (each request repeats an event already SUCCEEDED, answered 200)",
  acceptPg: "new events on PostgreSQL, delivery in the same process",
  acceptPgShared: (instances: number) =>
    `new events on PostgreSQL, ${instances} gateways on one database sharing the connections, each delivering`,
  drain: `drain to 1C, ONEC_MAX_CONCURRENCY=${GOALS.drain.concurrency}`,
} as const;

/** The peers scenario's contenders and, for its tables, whether an accepted event survives a power loss. */
const PEERS_DURABLE: Readonly<Record<string, string>> = {
  "gateway-off": "yes: WAL, synchronous=FULL",
  "handwritten-full": "yes: WAL, synchronous=FULL",
  "handwritten-normal": "no: WAL, synchronous=NORMAL",
  library: "no: Redis, in memory",
};
const PEERS_GATEWAY = "gateway-off";

/** Where a gateway row keeps its register. */
type Register = { kind: "sqlite"; path: string } | { kind: "postgres"; database: BenchDatabase };

/** In the order they run. */
const SCENARIOS = [
  "accept",
  "accept-off",
  "replay",
  "accept-pg",
  "peers",
  "webhook",
  "sync",
  "drain",
  "drain-pg",
] as const;
type Scenario = (typeof SCENARIOS)[number];
const TABLE_SCENARIOS: readonly Scenario[] = ["accept", "accept-off", "replay", "accept-pg"];
const POSTGRES_SCENARIOS: readonly Scenario[] = ["accept-pg", "drain-pg"];

const scenariosNamed = Boolean(process.env.BENCH_SCENARIOS);
const scenarios = scenarioList("BENCH_SCENARIOS", SCENARIOS.join(","));
const drainEvents = positiveInt("BENCH_DRAIN_EVENTS", 10_000);
const replayEvents = positiveInt("BENCH_REPLAY_EVENTS", 1000);
const syncRequests = positiveInt("BENCH_SYNC_REQUESTS", 3000);
const peerRounds = positiveInt("BENCH_PEER_ROUNDS", 3);
const peerSeconds = positiveInt("BENCH_PEER_SECONDS", 5);
const redisServer = process.env.BENCH_REDIS_URL || DEFAULT_BENCH_REDIS_URL;
const syncWarmup = positiveInt("BENCH_SYNC_WARMUP", 500);
const settings: LoadSettings = {
  connections: positiveInt("BENCH_CONNECTIONS", 50),
  durationSeconds: positiveInt("BENCH_DURATION", 10),
};
const postgresServer = process.env.BENCH_PG_URL || DEFAULT_BENCH_PG_URL;
/** In every generated event_id: ids never repeat across runs. */
const runId = `${Date.now().toString(36)}-${process.pid}`;
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

/** A scenario's outcome: whether it measured at all, and its lines for the goals' summary. */
interface Outcome {
  readonly ok: boolean;
  readonly goals: readonly GoalLine[];
}

async function main(): Promise<boolean> {
  let ok = await postgresAnswers();
  printSetup();
  const goals: GoalLine[] = [];
  const record = (outcome: Outcome) => {
    ok = outcome.ok && ok;
    goals.push(...outcome.goals);
  };
  const table = TABLE_SCENARIOS.some((scenario) => scenarios.has(scenario));
  if (table || scenarios.has("peers") || scenarios.has("webhook") || scenarios.has("sync")) {
    // One emulator for the table, the peers, webhook and sync: idle between rows, since each row's gateways stop with it.
    const onec = await startServer(emulatorSpec(), dir);
    if (table) record(await acceptTable(onec));
    if (scenarios.has("peers")) record(await peersScenario(onec));
    if (scenarios.has("webhook")) record(await webhookScenario(webhookOptions(onec)));
    if (scenarios.has("sync")) record(await syncScenario(onec));
  }
  await stopAll(); // each scenario gets the machine to itself
  if (scenarios.has("drain")) {
    console.log("");
    record(drainGoals(await runDrain({ events: drainEvents, dir, goal: GOALS.drain, ...profiling() })));
  }
  if (scenarios.has("drain-pg")) {
    console.log("");
    ok = (await runDrain({ events: drainEvents, dir, postgres: postgresServer, ...profiling() })).ok && ok;
  }
  printGoals(goals);
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

/** A gateway row of the table: how its gateways run, and what the load sends them. */
interface GatewayRow {
  readonly name: string;
  readonly work: string;
  readonly instances: number;
  readonly register: Register;
  /** On top of gatewaySpec's, e.g. DELIVERER=off. */
  readonly env?: Readonly<Record<string, string>>;
  /** The requests, once the gateways listen: the replay row records the events it repeats first. */
  readonly requests: (urls: readonly string[]) => Promise<Requests>;
  readonly goal?: RatioGoal;
}

/** One table: the bare server once, then each gateway row in turn, each stopped before the next starts. */
async function acceptTable(onec: Server): Promise<Outcome> {
  const bare = await startServer(bareSpec(), dir);
  // One generator for the bare server and every new-event row: the same bytes on the wire.
  const nextBody = orderPaidBodies(runId);
  const newEvents = async (): Promise<Requests> => ({ nextBody, expectedStatus: 202 });
  const measured: Measured[] = [
    await measure({ name: "bare", work: WORK.bare, servers: [bare], requests: { nextBody, expectedStatus: 201 } }),
  ];
  await stopServer(bare.child); // idle, but its own process: the gateways get the machine without it
  for (const [scenario, row] of sqliteRows(newEvents)) {
    if (scenarios.has(scenario)) measured.push(await measureGateways(row, onec));
  }
  if (scenarios.has("accept-pg")) {
    for (const instances of POSTGRES_INSTANCES) {
      // A database per row: the three-instance row must not start on the first row's rows and backlog.
      const database = await createBenchDatabase(postgresServer);
      const name = instances === 1 ? "gateway-pg" : `gateway-pg-x${instances}`;
      const work = instances === 1 ? WORK.acceptPg : WORK.acceptPgShared(instances);
      const register: Register = { kind: "postgres", database };
      measured.push(await measureGateways({ name, work, instances, register, requests: newEvents }, onec));
      await database.drop();
    }
  }

  printTable(measured);
  return { ok: verdict(measured), goals: tableGoals(measured) };
}

/** The table's rows on SQLite, in its order, each under the scenario that asks for it. */
function sqliteRows(newEvents: GatewayRow["requests"]): [Scenario, GatewayRow][] {
  const row = (name: string, work: string, rest: Pick<GatewayRow, "requests" | "goal" | "env">): GatewayRow => ({
    name,
    work,
    instances: 1,
    register: { kind: "sqlite", path: join(dir, `${name}.db`) },
    ...rest,
  });
  return [
    ["accept", row("gateway", WORK.accept, { requests: newEvents, goal: GOALS.accept })],
    [
      "accept-off",
      row("gateway-off", WORK.acceptOff, { requests: newEvents, goal: GOALS.acceptOff, env: { DELIVERER: "off" } }),
    ],
    ["replay", row("gateway-replay", WORK.replay, { requests: replaysOfFinishedEvents, goal: GOALS.replay })],
  ];
}

/**
 * The replay row's requests: BENCH_REPLAY_EVENTS events recorded through the
 * gateway and delivered (not measured), then repeated in turn with the
 * identical body, each answered 200 from the register.
 */
async function replaysOfFinishedEvents(urls: readonly string[]): Promise<Requests> {
  const [url] = urls;
  if (url === undefined) throw new Error("the replay row has no gateway");
  const nextBody = orderPaidBodies(`replay-${runId}`);
  const bodies = Array.from({ length: replayEvents }, () => nextBody());
  process.stdout.write(`recording ${bodies.length} events and waiting until all are SUCCEEDED...\n`);
  await recordFinishedEvents(url, bodies, REPLAY_SETTLE_LIMIT_MS);
  return { nextBody: repeatingBodies(bodies), expectedStatus: 200 };
}

/** Starts the row's gateways on one register, loads them together, stops them: their delivery backlog goes too. */
async function measureGateways(row: GatewayRow, onec: Server): Promise<Measured> {
  const names = Array.from({ length: row.instances }, (_, i) =>
    row.instances === 1 ? row.name : `${row.name}-${i + 1}`,
  );
  const servers = await Promise.all(
    names.map((each) => startServer(gatewaySpec(each, onec.url, row.register, row.env), dir)),
  );
  try {
    const requests = await row.requests(servers.map((server) => server.url));
    return await measure({ ...row, servers, requests });
  } catch (error) {
    for (const server of servers) console.error(`${server.name} output (tail):\n${tail(server.logFile)}`);
    throw error;
  } finally {
    await Promise.all(servers.map((server) => stopServer(server.child)));
  }
}

interface MeasureRow {
  readonly name: string;
  readonly work: string;
  readonly servers: readonly Server[];
  readonly requests: Requests;
  readonly register?: Register;
  readonly goal?: RatioGoal;
}

async function measure({ name, work, servers, requests, register, goal }: MeasureRow): Promise<Measured> {
  const urls = servers.map((server) => server.url);
  const across = servers.length === 1 ? "" : ` across ${servers.length} instances`;
  process.stdout.write(
    `running ${name}${across}: ${WARMUP_SECONDS} s warm-up, ${settings.durationSeconds} s measured...\n`,
  );
  // The warm-up lets the JIT, the database's caches and keep-alive sockets settle; it is not reported.
  const warmup = await runLoad(urls, { ...settings, durationSeconds: WARMUP_SECONDS }, requests);
  const sampler =
    profileDir !== undefined && register?.kind === "postgres"
      ? sampleWaits(postgresServer, register.database.name)
      : undefined;
  const memory = sampleRss(servers.map((server) => server.child.pid));
  const result = await measuredLoad(() => runLoad(urls, settings, requests));
  const peakRss = memory.stop();
  const waits = await sampler?.stop();
  return {
    name,
    work,
    servers,
    warmup,
    result,
    peakRss,
    ...(goal === undefined ? {} : { goal }),
    ...(waits === undefined ? {} : { waits }),
  };
}

/**
 * The gateway next to what a user could write or install instead, in one
 * run, interleaved (peers/rounds.ts). Set-up, not measured: the same
 * BENCH_REPLAY_EVENTS events recorded in every contender, through the gateway
 * by a gateway that delivers them until all are SUCCEEDED (then it stops and
 * the measured gateway, DELIVERER=off, opens the same file), in each peer by
 * one POST each. The library peer needs Redis: without it, it is left out in
 * one line (a failure when BENCH_SCENARIOS names peers).
 */
async function peersScenario(onec: Server): Promise<Outcome> {
  console.log("");
  let ok = true;
  const redisWhy = await redisUnreachable(redisServer);
  if (redisWhy !== undefined) {
    const line = `peers: library ${scenariosNamed ? "FAILED" : "skipped"}: no Redis answers at ${redisServer} (BENCH_REDIS_URL): ${redisWhy}`;
    if (scenariosNamed) console.error(line);
    else console.log(line);
    ok = !scenariosNamed;
  }
  const nextRecorded = orderPaidBodies(`peers-${runId}`);
  const recorded = Array.from({ length: replayEvents }, () => nextRecorded());
  const conflicting = conflictingBodies(recorded);
  // One generator for every contender's new events: the same bodies on the wire, never an id twice.
  const nextNew = orderPaidBodies(`peers-new-${runId}`);
  const requests = (created: number, replayed: number, refused: number): Contender["requests"] => ({
    new: { nextBody: nextNew, expectedStatus: created },
    repeat: { nextBody: repeatingBodies(recorded), expectedStatus: replayed },
    conflict: { nextBody: repeatingBodies(conflicting), expectedStatus: refused },
  });
  const keyPrefix = `gateway-bench-${runId}`;
  const servers: Server[] = [];
  try {
    const register: Register = { kind: "sqlite", path: join(dir, "peers-gateway.db") };
    process.stdout.write(
      `peers: recording ${recorded.length} events in the gateway, waiting until all are SUCCEEDED...\n`,
    );
    const setup = await startServer(gatewaySpec("peers-gateway-setup", onec.url, register), dir);
    try {
      await recordFinishedEvents(setup.url, recorded, REPLAY_SETTLE_LIMIT_MS);
    } catch (error) {
      console.error(`${setup.name} output (tail):\n${tail(setup.logFile)}`);
      throw error;
    } finally {
      await stopServer(setup.child);
    }
    const gateway = await startServer(gatewaySpec("peers-gateway-off", onec.url, register, { DELIVERER: "off" }), dir);
    servers.push(gateway);
    const contenders: Contender[] = [
      { name: PEERS_GATEWAY, server: gateway, requests: requests(202, 200, 409), profiled: true },
    ];
    for (const synchronous of ["FULL", "NORMAL"]) {
      const name = `handwritten-${synchronous.toLowerCase()}`;
      const env = { DATABASE_PATH: join(dir, `peers-${name}.db`), SYNCHRONOUS: synchronous };
      const server = await startServer(peerSpec(name, "handwritten.ts", env), dir);
      servers.push(server);
      contenders.push({ name, server, requests: requests(201, 200, 409) });
    }
    if (redisWhy === undefined) {
      const server = await startServer(
        peerSpec("library", "library.ts", { REDIS_URL: redisServer, KEY_PREFIX: keyPrefix }),
        dir,
      );
      servers.push(server);
      // The library's own statuses: a replay is the stored first answer (201), another body 422.
      contenders.push({ name: "library", server, requests: requests(201, 201, 422) });
    }
    process.stdout.write(`peers: recording the same ${recorded.length} events in each peer...\n`);
    for (const contender of contenders) {
      if (contender.server === gateway) continue;
      await recordEvents(contender.server.url, recorded, contender.requests.new.expectedStatus);
    }
    const runs = await runRounds(contenders, WORKLOADS, roundSettings(), (line) =>
      process.stdout.write(`running peers, ${line}...\n`),
    );
    const report: PeersReport = {
      scenario: "peers",
      titles: WORKLOAD_TITLES,
      runs,
      gateway: PEERS_GATEWAY,
      durable: PEERS_DURABLE,
      goals: GOALS.peers,
    };
    printPeers(report);
    ok = peersVerdict(report) && ok;
    return { ok, goals: peerGoalLines(report) };
  } finally {
    await Promise.all(servers.map((server) => stopServer(server.child)));
    if (redisWhy === undefined) {
      await deleteKeys(redisServer, keyPrefix).catch((error: unknown) =>
        console.error(`peers: could not delete the library's Redis keys under ${keyPrefix}: ${String(error)}`),
      );
    }
  }
}

function webhookOptions(onec: Server): Parameters<typeof webhookScenario>[0] {
  return {
    startGateway: (name, env) =>
      startServer(gatewaySpec(name, onec.url, { kind: "sqlite", path: join(dir, `${name}.db`) }, env), dir),
    sourcesFile: writeSourcesFile(dir),
    recorded: replayEvents,
    rounds: roundSettings(),
    goals: GOALS.webhook,
    runId,
  };
}

function roundSettings(): RoundSettings {
  return {
    connections: settings.connections,
    rounds: peerRounds,
    roundSeconds: peerSeconds,
    warmupSeconds: WARMUP_SECONDS,
  };
}

function peerSpec(name: string, file: string, env: Readonly<Record<string, string>>): ServerSpec {
  return {
    name: `peers-${name}`,
    script: `test/bench/peers/${file}`,
    env: { PORT: "0", SENDER_TOKEN: BENCH_SENDER_TOKEN, ...env },
    listeningUrl: (line) => line.match(/^peer listening on (\S+)/)?.[1],
  };
}

/** A gateway of its own that answers after delivering, on an emulator emptied of the table's orders. */
async function syncScenario(onec: Server): Promise<Outcome> {
  await resetEmulator(onec.url);
  const name = "gateway-sync";
  const register: Register = { kind: "sqlite", path: join(dir, `${name}.db`) };
  const gateway = await startServer(gatewaySpec(name, onec.url, register, { SYNC_WAIT_MS: String(SYNC_WAIT_MS) }), dir);
  try {
    console.log("");
    process.stdout.write(`running sync: ${syncWarmup} + ${syncRequests} requests of each kind, one at a time...\n`);
    const outcome = await measureSyncOverhead(gateway.url, onec.url, {
      requests: syncRequests,
      warmup: syncWarmup,
      goalP50Ms: GOALS.syncP50Ms,
    });
    if (!outcome.ok) console.error(`${name} output (tail):\n${tail(gateway.logFile)}`);
    const overhead = outcome.p50OverheadMs;
    const goal: GoalLine = {
      work: `sync answer overhead at p50 (SYNC_WAIT_MS=${SYNC_WAIT_MS}, 201 after 1C)`,
      against: "direct undici POST to the emulator",
      figure: overhead === undefined ? "n/a" : `${overhead.toFixed(2)} ms`,
      goal: `≤ ${GOALS.syncP50Ms} ms`,
      met: overhead === undefined ? undefined : overhead <= GOALS.syncP50Ms,
    };
    return { ok: outcome.ok, goals: [goal] };
  } finally {
    await stopServer(gateway.child);
  }
}

function drainGoals(outcome: DrainOutcome): Outcome {
  const { concurrency, ratio: goal } = GOALS.drain;
  const run = outcome.ratios.find((each) => each.concurrency === concurrency && each.workers === 1);
  const against = "raw undici POSTs to the emulator";
  return { ok: outcome.ok, goals: [ratioLine(WORK.drain, against, run?.ratio, goal)] };
}

function bareSpec(): ServerSpec {
  return {
    name: "bare",
    script: "test/bench/bare-server.ts",
    env: { PORT: "0" },
    listeningUrl: (line) => line.match(/^bare server listening on (\S+)/)?.[1],
  };
}

function gatewaySpec(
  name: string,
  onecUrl: string,
  register: Register,
  env: Readonly<Record<string, string>> = {},
): ServerSpec {
  return {
    name,
    script: START_ENTRY,
    nodeArgs: [...startNodeFlags(), ...cpuProfileArgs(profileDir, name)],
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: register.kind === "sqlite" ? register.path : register.database.url,
      ONEC_URL: onecUrl,
      SYNC_WAIT_MS: "0",
      LOG_LEVEL,
      SENDER_TOKENS: `bench:${BENCH_SENDER_TOKEN}`,
      // The setting: off, so the rows measure the accept path, not the limiter's bookkeeping.
      RATE_LIMIT_MAX: "0",
      ...env,
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
  if (TABLE_SCENARIOS.some((scenario) => scenarios.has(scenario))) printTableSetup();
  if (scenarios.has("peers")) printPeersSetup();
  if (scenarios.has("webhook")) printWebhookSetup({ rounds: roundSettings(), recorded: replayEvents });
  if (scenarios.has("sync")) {
    console.log(
      `sync: a gateway with SYNC_WAIT_MS=${SYNC_WAIT_MS} (a new event answered 201 once its own deliverer has ` +
        `delivered it to the 1C emulator), otherwise as the table's; against a direct undici POST of the same ` +
        `canonical body to the emulator; one connection each, one request at a time, every request timed`,
    );
  }
  console.log("");
}

function printTableSetup(): void {
  console.log(
    `accept table: autocannon, ${settings.connections} connections, ${settings.durationSeconds} s measured ` +
      `after ${WARMUP_SECONDS} s warm-up per row; the bare server first, then each gateway row in new processes ` +
      `on a new register; several gateways share the connections round-robin`,
  );
  console.log(
    `accept gateways: RATE_LIMIT_MAX=0 (rate limiter off), SYNC_WAIT_MS=0 (202 after the durable commit), ` +
      `SQLite journal_mode=WAL synchronous=FULL, PostgreSQL synchronous_commit=on, ` +
      `LOG_LEVEL=${LOG_LEVEL} (stdout to a file), one sender with its bearer token, the 1C emulator in its own process`,
  );
  const rows: [Scenario, string, string][] = [
    ["accept", "gateway", "a new event_id in every request (202); delivery to 1C in the same process, the default"],
    ["accept-off", "gateway-off", "a new event_id in every request (202); DELIVERER=off, nothing is delivered"],
    [
      "replay",
      "gateway-replay",
      `${replayEvents} events recorded through the gateway and polled until SUCCEEDED (not measured), ` +
        `then every request repeats one of them with the identical body (200)`,
    ],
    ["accept-pg", "gateway-pg", "as gateway, on a new PostgreSQL database"],
    ["accept-pg", `gateway-pg-x${POSTGRES_INSTANCES[1]}`, `${POSTGRES_INSTANCES[1]} such gateways on one new database`],
  ];
  const shown = rows.filter(([scenario]) => scenarios.has(scenario));
  const width = Math.max(...shown.map(([, name]) => name.length));
  console.log(`  ${"bare".padEnd(width)}  bare-server.ts, the same bodies as the new-event rows (201)`);
  for (const [, name, what] of shown) console.log(`  ${name.padEnd(width)}  ${what}`);
  console.log(`  peak RSS: every row's processes' VmRSS, read every 200 ms during its measured load; goal ${RSS_GOAL}`);
}

function printPeersSetup(): void {
  console.log(
    `peers: autocannon, ${settings.connections} connections; per workload a ${WARMUP_SECONDS} s warm-up each, then ` +
      `${peerRounds} rounds of ${peerSeconds} s per contender in turn (BENCH_PEER_ROUNDS, BENCH_PEER_SECONDS), ` +
      `each contender's process alive throughout; its figure is the median of its rounds`,
  );
  console.log(
    `  gateway-off         the gateway as in the table, DELIVERER=off (202 new, 200 repeat, 409 other body); ` +
      `${replayEvents} events recorded and delivered first`,
  );
  console.log(
    `  handwritten-full    Fastify + better-sqlite3, BEGIN IMMEDIATE … COMMIT per request, WAL synchronous=FULL ` +
      `(durable; 201, 200, 409)`,
  );
  console.log(`  handwritten-normal  the same with synchronous=NORMAL (not durable on power loss)`);
  console.log(
    `  library             @node-idempotency/core on Redis at ${redisServer} (BENCH_REDIS_URL), not durable ` +
      `(201 new, 201 replayed, 422 other body)`,
  );
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
