import { join } from "node:path";
import { Agent } from "undici";
import type { RegisterLocation } from "../../src/config/database-url.ts";
import { onecIdempotencyKey } from "../../src/delivery/attempt-delivery.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import { openRegister } from "../../src/register/open-register.ts";
import { DEFAULT_SENDER } from "../../src/register/senders.ts";
import { siteOrderOf } from "../support/records.ts";
import { cpuProfileArgs, measuredLoad } from "./cpu-profile.ts";
import { describeRatioGoal, goalNote, type RatioGoal, ratioMet } from "./goals.ts";
import { type CanonicalEvent, canonicalEvents, emulatorOrderKeys, postToOnec, resetEmulator } from "./onec-posts.ts";
import { createBenchDatabase } from "./postgres-database.ts";
import { sampleWaits } from "./postgres-waits.ts";
import { emulatorSpec, type Server, startScript, startServer, stopServer, tail } from "./processes.ts";

/**
 * The drain scenarios of `npm run bench`: N due events in a fresh register,
 * delivered to the 1C emulator (latency 0) by the production deliverer in its
 * own process (on PostgreSQL also by two at once), next to undici alone
 * POSTing the same bodies at the same total concurrency. The ratio is the
 * gateway's cost per delivery: claim, settle and their commits. See docs/performance.md.
 */

/** 4 is the production default of ONEC_MAX_CONCURRENCY. */
const CONCURRENCIES = [4, 16] as const;
/** Workers draining one register at once; only a shared server's register takes more than one. */
const POSTGRES_WORKERS = [1, 2] as const;
const LOG_LEVEL = "warn";
const WARMUP_POSTS = 5000;
/** One raw run lasts a second or two, and single runs vary by ±25 %: report the median of a few. */
const RAW_ROUNDS = 3;
/** Reserves in flight while filling, as concurrent accepts make them: a fill of one commit at a time would take minutes. */
const FILL_CONCURRENCY = 10;

export interface DrainSettings {
  readonly events: number;
  /** Where the SQLite files and the children's output go. */
  readonly dir: string;
  /** A PostgreSQL server: each fill is a new database there. Unset: a new SQLite file in `dir`. */
  readonly postgres?: string;
  /** BENCH_PROFILE: where the workers write their CPU profiles. */
  readonly profileDir?: string;
  /** A ratio the single-worker run at `concurrency` should reach, noted next to its figure. */
  readonly goal?: DrainGoal;
}

export interface DrainGoal {
  readonly concurrency: number;
  readonly ratio: RatioGoal;
}

/** One run's outcome: `ratio` is drain events/s ÷ raw req/s, undefined when either could not be timed. */
export interface DrainRatio {
  readonly concurrency: number;
  readonly workers: number;
  readonly ratio: number | undefined;
}

export interface DrainOutcome {
  /** False when a run failed its checks: its figures are not a measurement. */
  readonly ok: boolean;
  readonly ratios: readonly DrainRatio[];
}

interface Timed {
  /** Events delivered (drain) or requests answered 201 (raw). */
  readonly count: number;
  readonly ms: number;
}

interface DrainRun {
  readonly concurrency: number;
  readonly workers: number;
}

/** A fresh register holding one fill, and how to remove it. */
interface Fill {
  readonly location: RegisterLocation;
  /** PostgreSQL: the database's name, for sampling its waits. */
  readonly database?: string;
  remove(): Promise<void>;
}

export async function runDrain(settings: DrainSettings): Promise<DrainOutcome> {
  printSetup(settings);
  const events = canonicalEvents("drain", settings.events);
  const onec = await startServer(emulatorSpec(`${scenarioName(settings)}-onec-emulator`), settings.dir);
  try {
    // Neither side meets a cold emulator, nor raw a cold client: the JIT warms on requests not reported.
    for (let sent = 0; sent < WARMUP_POSTS; sent += events.length) {
      await rawPosts(onec.url, events, CONCURRENCIES[0], `warmup${sent}`);
    }
    let ok = true;
    const ratios: DrainRatio[] = [];
    for (const run of drainRuns(settings)) {
      const compared = await compare(onec, events, run, settings);
      ok = compared.ok && ok;
      ratios.push({ ...run, ratio: compared.ratio });
    }
    return { ok, ratios };
  } finally {
    await stopServer(onec.child);
  }
}

function scenarioName(settings: DrainSettings): string {
  return settings.postgres === undefined ? "drain" : "drain-pg";
}

function drainRuns(settings: DrainSettings): DrainRun[] {
  const workerCounts = settings.postgres === undefined ? [1] : POSTGRES_WORKERS;
  return CONCURRENCIES.flatMap((concurrency) => workerCounts.map((workers) => ({ concurrency, workers })));
}

async function compare(
  onec: Server,
  events: readonly CanonicalEvent[],
  run: DrainRun,
  settings: DrainSettings,
): Promise<{ ok: boolean; ratio: number | undefined }> {
  await resetEmulator(onec.url);
  const fill = await freshRegister(settings, run);
  let drain: Timed;
  let problems: string[];
  let waits: string | undefined;
  try {
    await seed(fill.location, events);
    const sampler =
      settings.profileDir !== undefined && settings.postgres !== undefined && fill.database !== undefined
        ? sampleWaits(settings.postgres, fill.database)
        : undefined;
    drain = await runWorkers(onec.url, fill.location, run, settings);
    waits = await sampler?.stop();
    problems = await checkDrain(fill.location, events, onec.url);
  } finally {
    await fill.remove();
  }

  // Raw gets as many connections as all the workers together hold to 1C.
  const connections = run.concurrency * run.workers;
  const rounds: Timed[] = [];
  for (let round = 1; round <= RAW_ROUNDS; round++) {
    await resetEmulator(onec.url);
    const raw = await rawPosts(onec.url, events, connections, `raw${round}`);
    const orders = (await emulatorOrderKeys(onec.url)).length;
    if (raw.count !== events.length || orders !== events.length) {
      problems.push(
        `raw run ${round}: ${raw.count} of ${events.length} answered 201, the emulator holds ${orders} orders`,
      );
    }
    rounds.push(raw);
  }
  const raw = median(rounds);

  const label = runLabel(settings, run);
  console.log("");
  console.log(`${scenarioName(settings)}: ${events.length} pending events → 1C emulator (latency 0), ${label}`);
  row("gateway deliverer", rate(drain), `events/s  (${seconds(drain)} s)`);
  row("raw undici POST", rate(raw), `req/s     (median of ${rounds.map(rate).join(", ")}; ${connections} connections)`);
  const drainRatio = ratio(drain, raw);
  const goal = goalOf(settings, run);
  const note = goal === undefined ? "" : goalNote(describeRatioGoal(goal), ratioMet(drainRatio, goal));
  row("ratio drain/raw", drainRatio === undefined ? "n/a" : drainRatio.toFixed(2), note);
  if (problems.length === 0) row("verified", String(events.length), "SUCCEEDED in the register and orders in 1C");
  if (waits !== undefined) console.log(`  PostgreSQL during the drain: ${waits}`);
  for (const problem of problems) console.error(`FAIL ${scenarioName(settings)}, ${label}: ${problem}`);
  if (problems.length > 0) console.error(`emulator output (tail):\n${tail(onec.logFile)}`);
  return { ok: problems.length === 0, ratio: drainRatio };
}

/** The goal applies to one worker at the goal's concurrency: the gateway's own drain, not a cluster's. */
function goalOf(settings: DrainSettings, run: DrainRun): RatioGoal | undefined {
  const goal = settings.goal;
  return goal !== undefined && goal.concurrency === run.concurrency && run.workers === 1 ? goal.ratio : undefined;
}

function runLabel(settings: DrainSettings, { concurrency, workers }: DrainRun): string {
  const setting = `ONEC_MAX_CONCURRENCY=${concurrency}`;
  if (settings.postgres === undefined) return setting;
  return `PostgreSQL, ${workers} worker${workers === 1 ? "" : "s"}, ${setting}${workers === 1 ? "" : " each"}`;
}

async function freshRegister(settings: DrainSettings, run: DrainRun): Promise<Fill> {
  if (settings.postgres === undefined) {
    // The file goes with the bench's temp dir.
    return {
      location: { kind: "sqlite", path: join(settings.dir, `drain-${run.concurrency}.db`) },
      remove: async () => {},
    };
  }
  const database = await createBenchDatabase(settings.postgres);
  return { location: { kind: "postgres", url: database.url }, database: database.name, remove: () => database.drop() };
}

/** Set-up, not measured: through the port's reserve, each event its own commit, as the accept path records them. */
async function seed(location: RegisterLocation, events: readonly CanonicalEvent[]): Promise<void> {
  const register = await openRegister(location, { poolMax: FILL_CONCURRENCY });
  try {
    const now = Date.now();
    let next = 0;
    const loop = async () => {
      for (let event = events[next++]; event !== undefined; event = events[next++]) {
        const { eventId, correlationId, canonical } = event;
        const { fingerprint, policy, text } = canonical;
        await register.reserve({
          sender: DEFAULT_SENDER,
          eventId,
          fingerprint,
          policyVersion: policy,
          body: text,
          ...siteOrderOf(text),
          correlationId,
          now,
        });
      }
    };
    await Promise.all(Array.from({ length: FILL_CONCURRENCY }, loop));
  } finally {
    await register.close();
  }
}

/** All workers made ready first, then started at once: timed from the first start to the last final settle. */
async function runWorkers(
  onecUrl: string,
  location: RegisterLocation,
  run: DrainRun,
  settings: DrainSettings,
): Promise<Timed> {
  const names = Array.from({ length: run.workers }, (_, i) => {
    const which = run.workers === 1 ? "" : `-${i + 1}of${run.workers}`;
    return `${scenarioName(settings)}-worker-c${run.concurrency}${which}`;
  });
  const ready = await Promise.all(
    names.map((name) =>
      startScript(
        {
          name,
          script: "test/bench/drain-worker.ts",
          nodeArgs: cpuProfileArgs(settings.profileDir, name),
          env: {
            ONEC_URL: onecUrl,
            DATABASE_URL: location.kind === "sqlite" ? location.path : location.url,
            ONEC_MAX_CONCURRENCY: String(run.concurrency),
            LOG_LEVEL,
          },
        },
        settings.dir,
      ),
    ),
  );
  const exited = await measuredLoad(() => Promise.all(ready.map((worker) => worker.go())));
  const results = exited.map((worker, i) => {
    const result = parseResult(worker.stdout);
    if (worker.exitCode !== 0 || result === undefined) {
      throw new Error(
        `${names[i]} failed (exit ${worker.exitCode}); its output:\n${worker.stdout}${tail(worker.logFile)}`,
      );
    }
    return result;
  });
  return {
    count: results.reduce((sum, { delivered }) => sum + delivered, 0),
    ms:
      Math.max(...results.map(({ finishedAt }) => finishedAt)) - Math.min(...results.map(({ startedAt }) => startedAt)),
  };
}

interface WorkerResult {
  readonly delivered: number;
  readonly startedAt: number;
  readonly finishedAt: number;
}

function parseResult(stdout: string): WorkerResult | undefined {
  try {
    const { delivered, startedAt, finishedAt } = JSON.parse(stdout) as Partial<Record<keyof WorkerResult, unknown>>;
    return typeof delivered === "number" && typeof startedAt === "number" && typeof finishedAt === "number"
      ? { delivered, startedAt, finishedAt }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The register says every event SUCCEEDED, and the emulator holds exactly one order for each. */
async function checkDrain(
  location: RegisterLocation,
  events: readonly CanonicalEvent[],
  onecUrl: string,
): Promise<string[]> {
  const register = await openRegister(location);
  const records = await register.list({ limit: events.length + 1 }).finally(() => register.close());
  const succeeded = records.filter((record) => record.status === EventStatus.SUCCEEDED).length;
  const keys = new Set(await emulatorOrderKeys(onecUrl));
  const ordered = events.filter(({ eventId }) => keys.has(onecIdempotencyKey(DEFAULT_SENDER, eventId))).length;
  const problems: string[] = [];
  if (records.length !== events.length || succeeded !== events.length) {
    problems.push(`the register holds ${records.length} events, ${succeeded} SUCCEEDED; expected ${events.length}`);
  }
  if (keys.size !== events.length || ordered !== events.length) {
    problems.push(`the emulator holds ${keys.size} orders, ${ordered} from the drain; expected ${events.length}`);
  }
  return problems;
}

/** What the gateway's OnecClient sends, minus its classification: C loops on an Agent of C connections. */
async function rawPosts(
  onecUrl: string,
  events: readonly CanonicalEvent[],
  concurrency: number,
  keyPrefix: string,
): Promise<Timed> {
  const agent = new Agent({ connections: concurrency });
  let next = 0;
  let created = 0;
  const loop = async () => {
    for (let event = events[next++]; event !== undefined; event = events[next++]) {
      const status = await postToOnec(onecUrl, agent, event, `${keyPrefix}-${event.eventId}`);
      if (status === 201) created += 1;
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  const ms = performance.now() - startedAt;
  await agent.close();
  return { count: created, ms };
}

function printSetup(settings: DrainSettings): void {
  const where =
    settings.postgres === undefined
      ? "a fresh SQLite file"
      : "a fresh PostgreSQL database per run (one worker, then two at once)";
  console.log(
    `${scenarioName(settings)}: ${settings.events} events per run, reserved through the register's reserve into ${where} ` +
      `(${FILL_CONCURRENCY} at a time, not measured); test/bench/drain-worker.ts runs createDeliveryStack + ` +
      `deliverer.start() in its own process, LOG_LEVEL=${LOG_LEVEL}, timed from start() to the last settle`,
  );
  console.log(
    `raw: undici request() from the bench process, Agent({connections: C}) and C loops (C: all the workers' ` +
      `ONEC_MAX_CONCURRENCY together), the same bodies under new Idempotency-Keys, ${RAW_ROUNDS} runs; ` +
      `1C emulator in its own process, reset before each run, at least ${WARMUP_POSTS} warm-up POSTs`,
  );
}

function row(label: string, value: string, rest = ""): void {
  console.log(`  ${label.padEnd(18)} ${value.padStart(6)}  ${rest}`.trimEnd());
}

function median(rounds: readonly Timed[]): Timed {
  const byRate = [...rounds].sort((a, b) => a.count / a.ms - b.count / b.ms);
  return byRate[Math.floor(byRate.length / 2)] ?? { count: 0, ms: 0 };
}

function rate({ count, ms }: Timed): string {
  return ms > 0 ? ((count * 1000) / ms).toFixed(0) : "n/a";
}

function seconds({ ms }: Timed): string {
  return (ms / 1000).toFixed(2);
}

function ratio(drain: Timed, raw: Timed): number | undefined {
  return drain.ms > 0 && raw.ms > 0 && raw.count > 0 ? (drain.count * raw.ms) / (drain.ms * raw.count) : undefined;
}
