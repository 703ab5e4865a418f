import type autocannon from "autocannon";
import { describeRatioGoal, type GoalLine, goalNote, type RatioGoal, ratioLine, ratioMet } from "./goals.ts";
import type { LoadRun } from "./load.ts";
import { type Server, tail } from "./processes.ts";
import { megabytes } from "./rss.ts";

/** The most resident memory a gateway process may hold under load. */
export const RSS_GOAL_MB = 200;
export const RSS_GOAL = `≤ ${RSS_GOAL_MB} MB`;

/** One row of the accept table: a server, or several gateways sharing the load. */
export interface Measured {
  readonly name: string;
  /** What the row's requests make the server do, for the legend and the goals. */
  readonly work: string;
  /** Servers sharing the load, round-robin by connection. */
  readonly servers: readonly Server[];
  readonly warmup: LoadRun;
  readonly result: LoadRun;
  /** The highest VmRSS of any one of the row's processes during the measured load. */
  readonly peakRss: number | undefined;
  /** Of req/s to the bare server's; unset, the ratio is reported without one. */
  readonly goal?: RatioGoal;
  /** BENCH_PROFILE on PostgreSQL: what the database's backends waited on during the measured run. */
  readonly waits?: string;
}

/** The table, then each gateway row's ratios to the first row, the bare server, with its goals. */
export function printTable(measured: readonly Measured[]): void {
  const header = [
    "server",
    "req/s avg",
    "p50 ms",
    "p99 ms",
    "expected",
    "unexpected",
    "errors/timeouts",
    "statuses",
    "peak RSS MB",
  ];
  const rows = measured.map(({ name, result: { result: r, expectedStatus, unexpected }, peakRss }) => [
    name,
    r.requests.average.toFixed(0),
    String(r.latency.p50), // autocannon records whole milliseconds
    String(r.latency.p99),
    String(expectedStatus),
    String(unexpected),
    `${r.errors}/${r.timeouts}`,
    statuses(r),
    megabytes(peakRss),
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

  const [bare, ...gateways] = measured;
  if (bare === undefined) return;
  const bareRate = bare.result.result.requests.average;
  for (const gateway of gateways) {
    const { result: r } = gateway.result;
    const { servers } = gateway;
    const label = `ratio ${gateway.name}/bare:`;
    const perInstance =
      servers.length === 1
        ? ""
        : `; per instance ${formatRatio(r.requests.average / servers.length, bareRate)} ` +
          `(${(r.requests.average / servers.length).toFixed(0)} req/s each)`;
    const goal =
      gateway.goal === undefined
        ? ""
        : `; ${goalNote(describeRatioGoal(gateway.goal), ratioMet(rateRatio(gateway, bare), gateway.goal))}`;
    console.log("");
    console.log(`${gateway.name}: ${gateway.work}`);
    console.log(`  ${label} ${formatRatio(r.requests.average, bareRate)} (req/s)${perInstance}${goal}`);
    console.log(`  ${label} ${formatRatio(r.latency.p99, bare.result.result.latency.p99)} (p99 latency)`);
    const each = servers.length === 1 ? "" : " (the largest of its processes)";
    console.log(`  peak RSS${each}: ${megabytes(gateway.peakRss)} MB; ${goalNote(RSS_GOAL, rssMet(gateway))}`);
    if (gateway.waits !== undefined) console.log(`  PostgreSQL during ${gateway.name}: ${gateway.waits}`);
  }
}

/** The summary's lines for the table: each row's ratio goal, then every gateway row's memory. */
export function tableGoals(measured: readonly Measured[]): GoalLine[] {
  const [bare, ...gateways] = measured;
  if (bare === undefined) return [];
  const ratios = gateways.flatMap((gateway) =>
    gateway.goal === undefined
      ? []
      : [ratioLine(gateway.work, "bare Fastify, req/s", rateRatio(gateway, bare), gateway.goal)],
  );
  const memory = gateways.map((gateway) => ({
    work: `peak RSS under load, ${gateway.name}`,
    against: "-",
    figure: `${megabytes(gateway.peakRss)} MB`,
    goal: RSS_GOAL,
    met: rssMet(gateway),
  }));
  return [...ratios, ...memory];
}

function rateRatio(gateway: Measured, bare: Measured): number | undefined {
  const bareRate = bare.result.result.requests.average;
  return bareRate > 0 ? gateway.result.result.requests.average / bareRate : undefined;
}

function rssMet({ peakRss }: Measured): boolean | undefined {
  return peakRss === undefined ? undefined : peakRss <= RSS_GOAL_MB * 2 ** 20;
}

/** e.g. "202:51234": shows the gateway really accepted (202) rather than replayed a duplicate (200). */
function statuses(result: autocannon.Result): string {
  const stats = result.statusCodeStats ?? {};
  return Object.entries(stats)
    .map(([code, { count }]) => `${code}:${count ?? 0}`)
    .join(" ");
}

function formatRatio(numerator: number, denominator: number): string {
  return denominator > 0 ? (numerator / denominator).toFixed(2) : "n/a";
}

/** Numbers from a server that failed requests, or answered other than expected, are not a measurement; the warm-up counts too. */
export function verdict(measured: readonly Measured[]): boolean {
  let ok = true;
  for (const { name, warmup, result, servers } of measured) {
    let failed = false;
    for (const [phase, run] of [["warm-up", warmup] as const, ["measured", result] as const]) {
      const { result: r, unexpected, expectedStatus } = run;
      if (unexpected === 0 && r.errors === 0) continue;
      failed = true;
      console.error(
        `FAIL ${name} (${phase}): ${unexpected} answers other than ${expectedStatus} (${statuses(r)}), ` +
          `${r.errors} errors, ${r.timeouts} timeouts`,
      );
    }
    if (!failed) continue;
    ok = false;
    for (const server of servers) console.error(`${server.name} output (tail):\n${tail(server.logFile)}`);
  }
  return ok;
}
