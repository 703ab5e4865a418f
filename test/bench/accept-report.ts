import type autocannon from "autocannon";
import { type Server, tail } from "./processes.ts";

/** One row of the accept table: a server, or several gateways sharing the load. */
export interface Measured {
  readonly name: string;
  /** Servers sharing the load, round-robin by connection. */
  readonly servers: readonly Server[];
  readonly warmup: autocannon.Result;
  readonly result: autocannon.Result;
  /** BENCH_PROFILE on PostgreSQL: what the database's backends waited on during the measured run. */
  readonly waits?: string;
}

/** The table, then each gateway row's ratios to the first row, the bare server. */
export function printTable(measured: readonly Measured[]): void {
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

  const [bare, ...gateways] = measured;
  if (bare === undefined) return;
  for (const gateway of gateways) {
    const { result: r, servers } = gateway;
    const label = `ratio ${gateway.name}/bare:`;
    const perInstance =
      servers.length === 1
        ? ""
        : `; per instance ${ratio(r.requests.average / servers.length, bare.result.requests.average)} ` +
          `(${(r.requests.average / servers.length).toFixed(0)} req/s each)`;
    console.log("");
    console.log(`${label} ${ratio(r.requests.average, bare.result.requests.average)} (req/s)${perInstance}`);
    console.log(`${label} ${ratio(r.latency.p99, bare.result.latency.p99)} (p99 latency)`);
    if (gateway.waits !== undefined) console.log(`PostgreSQL during ${gateway.name}: ${gateway.waits}`);
  }
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
export function verdict(measured: readonly Measured[]): boolean {
  let ok = true;
  for (const { name, warmup, result, servers } of measured) {
    let failed = false;
    for (const [phase, r] of [["warm-up", warmup] as const, ["measured", result] as const]) {
      if (r.non2xx === 0 && r.errors === 0) continue;
      failed = true;
      console.error(`FAIL ${name} (${phase}): ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
    }
    if (!failed) continue;
    ok = false;
    for (const server of servers) console.error(`${server.name} output (tail):\n${tail(server.logFile)}`);
  }
  return ok;
}
