import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Agent, request } from "undici";
import { onecIdempotencyKey } from "../../src/delivery/attempt-delivery.ts";
import { type Canonical, canonicalizeEvent } from "../../src/domain/fingerprint.ts";
import { EventStatus } from "../../src/register/event-status.ts";
import { DEFAULT_SENDER } from "../../src/register/senders.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidExample } from "./load.ts";
import { emulatorSpec, runScript, type Server, startServer, stopServer, tail } from "./processes.ts";

/**
 * The drain scenario of `npm run bench`: N due events in a fresh register,
 * delivered to the 1C emulator (latency 0) by the production deliverer in its
 * own process, next to undici alone POSTing the same bodies at the same
 * concurrency. The ratio is the gateway's cost per delivery: claim, settle and
 * their fsyncs. See README.md.
 */

/** 4 is the production default of ONEC_MAX_CONCURRENCY. */
const CONCURRENCIES = [4, 16] as const;
const LOG_LEVEL = "warn";
const WARMUP_POSTS = 5000;
/** One raw run lasts a second or two, and single runs vary by ±25 %: report the median of a few. */
const RAW_ROUNDS = 3;

export interface DrainSettings {
  readonly events: number;
  /** Where the SQLite files and the children's output go. */
  readonly dir: string;
}

interface DrainEvent {
  readonly eventId: string;
  readonly correlationId: string;
  readonly canonical: Canonical;
}

interface Timed {
  /** Events delivered (drain) or requests answered 201 (raw). */
  readonly count: number;
  readonly ms: number;
}

export async function runDrain(settings: DrainSettings): Promise<boolean> {
  printSetup(settings.events);
  const events = drainEvents(settings.events);
  const onec = await startServer(emulatorSpec("drain-onec-emulator"), settings.dir);
  try {
    // Neither side meets a cold emulator, nor raw a cold client: the JIT warms on requests not reported.
    for (let sent = 0; sent < WARMUP_POSTS; sent += events.length) {
      await rawPosts(onec.url, events, CONCURRENCIES[0], `warmup${sent}`);
    }
    let ok = true;
    for (const concurrency of CONCURRENCIES) ok = (await compare(onec, events, concurrency, settings.dir)) && ok;
    return ok;
  } finally {
    await stopServer(onec.child);
  }
}

async function compare(
  onec: Server,
  events: readonly DrainEvent[],
  concurrency: number,
  dir: string,
): Promise<boolean> {
  await resetEmulator(onec.url);
  const database = join(dir, `drain-${concurrency}.db`);
  await seed(database, events);
  const drain = await runWorker(onec.url, database, concurrency, dir);
  const problems = await checkDrain(database, events, onec.url);

  const rounds: Timed[] = [];
  for (let round = 1; round <= RAW_ROUNDS; round++) {
    await resetEmulator(onec.url);
    const raw = await rawPosts(onec.url, events, concurrency, `raw${round}`);
    const orders = (await emulatorOrderKeys(onec.url)).length;
    if (raw.count !== events.length || orders !== events.length) {
      problems.push(
        `raw run ${round}: ${raw.count} of ${events.length} answered 201, the emulator holds ${orders} orders`,
      );
    }
    rounds.push(raw);
  }
  const raw = median(rounds);

  console.log("");
  console.log(`drain: ${events.length} pending events → 1C emulator (latency 0), ONEC_MAX_CONCURRENCY=${concurrency}`);
  row("gateway deliverer", rate(drain), `events/s  (${seconds(drain)} s)`);
  row("raw undici POST", rate(raw), `req/s     (median of ${rounds.map(rate).join(", ")})`);
  row("ratio drain/raw", ratio(drain, raw));
  if (problems.length === 0) row("verified", String(events.length), "SUCCEEDED in the register and orders in 1C");
  for (const problem of problems) console.error(`FAIL drain, ONEC_MAX_CONCURRENCY=${concurrency}: ${problem}`);
  if (problems.length > 0) console.error(`emulator output (tail):\n${tail(onec.logFile)}`);
  return problems.length === 0;
}

function drainEvents(count: number): DrainEvent[] {
  const example = orderPaidExample();
  const run = `${Date.now().toString(36)}-${process.pid}`;
  return Array.from({ length: count }, (_, i) => {
    const eventId = `drain-${run}-${i + 1}`;
    const canonical = canonicalizeEvent({ ...example, event_id: eventId });
    return { eventId, correlationId: randomUUID(), canonical };
  });
}

/** Set-up, not measured: one fsync per event, as the accept path commits them. */
async function seed(database: string, events: readonly DrainEvent[]): Promise<void> {
  const register = new SqliteRegister(database);
  try {
    const now = Date.now();
    for (const { eventId, correlationId, canonical } of events) {
      const { fingerprint, policy, text } = canonical;
      await register.reserve({
        sender: DEFAULT_SENDER,
        eventId,
        fingerprint,
        policyVersion: policy,
        body: text,
        correlationId,
        now,
      });
    }
  } finally {
    await register.close();
  }
}

async function runWorker(onecUrl: string, database: string, concurrency: number, dir: string): Promise<Timed> {
  const run = await runScript(
    {
      name: `drain-worker-${concurrency}`,
      script: "test/bench/drain-worker.ts",
      env: {
        ONEC_URL: onecUrl,
        DATABASE_URL: database,
        ONEC_MAX_CONCURRENCY: String(concurrency),
        LOG_LEVEL,
      },
    },
    dir,
  );
  const result = parseResult(run.stdout);
  if (run.exitCode !== 0 || result === undefined) {
    throw new Error(`drain worker failed (exit ${run.exitCode}); its output:\n${run.stdout}${tail(run.logFile)}`);
  }
  return { count: result.delivered, ms: result.ms };
}

function parseResult(stdout: string): { delivered: number; ms: number } | undefined {
  try {
    const { delivered, ms } = JSON.parse(stdout) as { delivered?: unknown; ms?: unknown };
    return typeof delivered === "number" && typeof ms === "number" ? { delivered, ms } : undefined;
  } catch {
    return undefined;
  }
}

/** The register says every event SUCCEEDED, and the emulator holds exactly one order for each. */
async function checkDrain(database: string, events: readonly DrainEvent[], onecUrl: string): Promise<string[]> {
  const register = new SqliteRegister(database);
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
  events: readonly DrainEvent[],
  concurrency: number,
  keyPrefix: string,
): Promise<Timed> {
  const agent = new Agent({ connections: concurrency });
  let next = 0;
  let created = 0;
  const loop = async () => {
    for (let event = events[next++]; event !== undefined; event = events[next++]) {
      const response = await request(`${onecUrl}/v1/orders/paid`, {
        method: "POST",
        dispatcher: agent,
        headers: {
          "content-type": "application/json; charset=utf-8",
          accept: "application/json",
          "x-correlation-id": event.correlationId,
          "idempotency-key": `${keyPrefix}-${event.eventId}`,
        },
        body: event.canonical.text,
      });
      await response.body.text();
      if (response.statusCode === 201) created += 1;
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  const ms = performance.now() - startedAt;
  await agent.close();
  return { count: created, ms };
}

async function emulatorOrderKeys(onecUrl: string): Promise<string[]> {
  const response = await request(`${onecUrl}/_emulator/orders`);
  const text = await response.body.text();
  const { orders } = (response.statusCode === 200 ? JSON.parse(text) : {}) as { orders?: { key?: unknown }[] };
  if (!Array.isArray(orders)) throw new Error(`GET /_emulator/orders answered ${response.statusCode}: ${text}`);
  return orders.map(({ key }) => String(key));
}

async function resetEmulator(onecUrl: string): Promise<void> {
  const response = await request(`${onecUrl}/_emulator/reset`, { method: "POST" });
  await response.body.dump();
  if (response.statusCode !== 204) throw new Error(`POST /_emulator/reset answered ${response.statusCode}`);
}

function printSetup(events: number): void {
  console.log(
    `drain: ${events} events per run, reserved with SqliteRegister.reserve into a fresh SQLite file (not measured); ` +
      `test/bench/drain-worker.ts runs createDeliveryStack + deliverer.start() in its own process, ` +
      `LOG_LEVEL=${LOG_LEVEL}, timed from start() to the last settle`,
  );
  console.log(
    `raw: undici request() from the bench process, Agent({connections: C}) and C loops, the same bodies under ` +
      `new Idempotency-Keys, ${RAW_ROUNDS} runs; 1C emulator in its own process, reset before each run, ` +
      `at least ${WARMUP_POSTS} warm-up POSTs`,
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

function ratio(drain: Timed, raw: Timed): string {
  return drain.ms > 0 && raw.ms > 0 && raw.count > 0
    ? ((drain.count * raw.ms) / (drain.ms * raw.count)).toFixed(2)
    : "n/a";
}
