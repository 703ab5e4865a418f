import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type autocannon from "autocannon";
import { runDrain } from "./drain.ts";
import { BENCH_SENDER_TOKEN, type LoadSettings, orderPaidBodies, runLoad } from "./load.ts";
import { emulatorSpec, type Server, type ServerSpec, startServer, stopAll, tail } from "./processes.ts";

/**
 * `npm run bench`, and the accept scenario: requests/s and latency of the
 * gateway's accept path next to a bare Fastify server, same machine, same run,
 * same load. Then, unless BENCH_SCENARIOS says otherwise, the drain scenario
 * (drain.ts). The ratios are the numbers to watch; the absolute figures depend
 * on the machine. See README.md.
 */

const WARMUP_SECONDS = 2;
const LOG_LEVEL = "info"; // the production default: its per-request log lines are part of the real cost
const TMPFS_MAGIC = 0x01021994;

interface Measured {
  readonly name: string;
  readonly warmup: autocannon.Result;
  readonly result: autocannon.Result;
}

const SCENARIOS = ["accept", "drain"] as const;
type Scenario = (typeof SCENARIOS)[number];

const scenarios = scenarioList("BENCH_SCENARIOS", SCENARIOS.join(","));
const drainEvents = positiveInt("BENCH_DRAIN_EVENTS", 10_000);
const settings: LoadSettings = {
  connections: positiveInt("BENCH_CONNECTIONS", 50),
  durationSeconds: positiveInt("BENCH_DURATION", 10),
};
const dir = mkdtempSync(join(process.env.BENCH_TMPDIR || os.tmpdir(), "gateway-bench-"));

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= stopAll().finally(() => rmSync(dir, { recursive: true, force: true }));
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}

try {
  process.exitCode = (await main()) ? 0 : 1;
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await cleanup();
}

async function main(): Promise<boolean> {
  printSetup();
  let ok = true;
  if (scenarios.has("accept")) ok = (await acceptScenario()) && ok;
  await stopAll(); // each scenario gets the machine to itself
  if (scenarios.has("drain")) {
    console.log("");
    ok = (await runDrain({ events: drainEvents, dir })) && ok;
  }
  return ok;
}

async function acceptScenario(): Promise<boolean> {
  const bare = await startServer(bareSpec(), dir);
  const onec = await startServer(emulatorSpec(), dir);
  const gateway = await startServer(gatewaySpec(onec.url), dir);

  // One generator for both servers: the same bytes on the wire, ids never repeat across runs.
  const nextBody = orderPaidBodies(`${Date.now().toString(36)}-${process.pid}`);
  const measured: Measured[] = [];
  for (const server of [bare, gateway]) measured.push(await measure(server, nextBody));

  printTable(measured);
  return verdict(measured, gateway);
}

async function measure(server: Server, nextBody: () => string): Promise<Measured> {
  process.stdout.write(
    `running ${server.name}: ${WARMUP_SECONDS} s warm-up, ${settings.durationSeconds} s measured...\n`,
  );
  // The warm-up lets the JIT, SQLite's page cache and keep-alive sockets settle; it is not reported.
  const warmup = await runLoad(server.url, { ...settings, durationSeconds: WARMUP_SECONDS }, nextBody);
  const result = await runLoad(server.url, settings, nextBody);
  return { name: server.name, warmup, result };
}

function bareSpec(): ServerSpec {
  return {
    name: "bare",
    script: "test/bench/bare-server.ts",
    env: { PORT: "0" },
    listeningUrl: (line) => line.match(/^bare server listening on (\S+)/)?.[1],
  };
}

function gatewaySpec(onecUrl: string): ServerSpec {
  return {
    name: "gateway",
    script: "src/main.ts",
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: join(dir, "gateway.db"),
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
  if (!scenarios.has("accept")) return;
  console.log(
    `accept load: autocannon, ${settings.connections} connections, ${settings.durationSeconds} s measured ` +
      `after ${WARMUP_SECONDS} s warm-up per server, a new event_id in every request`,
  );
  console.log(
    `accept gateway: SYNC_WAIT_MS=0 (202 after the durable commit), SQLite journal_mode=WAL synchronous=FULL, ` +
      `LOG_LEVEL=${LOG_LEVEL} (stdout to a file), background delivery to the 1C emulator in its own process`,
  );
  console.log("");
}

function printTable(measured: readonly Measured[]): void {
  const header = ["server", "req/s avg", "p50 ms", "p99 ms", "2xx", "non-2xx", "errors/timeouts", "statuses"];
  const rows = measured.map(({ name, result: r }) => [
    name,
    r.requests.average.toFixed(0),
    String(r.latency.p50), // autocannon records whole milliseconds
    String(r.latency.p99),
    String(r["2xx"]),
    String(r.non2xx),
    `${r.errors}/${r.timeouts}`,
    statuses(r),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  console.log("");
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );

  const [bare, gateway] = measured;
  if (bare === undefined || gateway === undefined) return;
  console.log("");
  console.log(`ratio gateway/bare: ${ratio(gateway.result.requests.average, bare.result.requests.average)} (req/s)`);
  console.log(`ratio gateway/bare: ${ratio(gateway.result.latency.p99, bare.result.latency.p99)} (p99 latency)`);
}

/** e.g. "202:51234": shows the gateway really accepted (202) rather than replayed a duplicate (200). */
function statuses(result: autocannon.Result): string {
  const stats = result.statusCodeStats ?? {};
  return Object.entries(stats)
    .map(([code, { count }]) => `${code}:${count ?? 0}`)
    .join(" ");
}

function ratio(numerator: number, denominator: number): string {
  return denominator > 0 ? (numerator / denominator).toFixed(2) : "n/a";
}

/** Numbers from a server that failed requests are not a measurement; the warm-up counts too. */
function verdict(measured: readonly Measured[], gateway: Server): boolean {
  let ok = true;
  for (const { name, warmup, result } of measured) {
    for (const [phase, r] of [["warm-up", warmup] as const, ["measured", result] as const]) {
      if (r.non2xx === 0 && r.errors === 0) continue;
      ok = false;
      console.error(`FAIL ${name} (${phase}): ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
    }
  }
  if (!ok) console.error(`gateway output (tail):\n${tail(gateway.logFile)}`);
  return ok;
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
