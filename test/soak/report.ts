import { describeLocation } from "../../src/config/database-url.ts";
import type { FaultDone } from "./chaos.ts";
import type { SoakOptions } from "./options.ts";
import { type Failure, FIGURES, type Findings } from "./verify.ts";

const HARNESS_CHECKS: ReadonlySet<Failure> = new Set(["unknownOrders", "journalMismatches"]);

export interface Timings {
  /** From the end of the last fault until no event was pending and the shop had every final answer; undefined if never. */
  readonly drainMs: number | undefined;
  readonly wallMs: number;
}

const LABELS: Readonly<Record<Failure, string>> = {
  duplicates: "duplicates",
  lost: "lost",
  stuck: "stuck",
  disagreements: "status URLs that disagree with 1C",
  resendMismatches: "resends not byte-identical",
  unanswered: "unanswered requests",
  unknownOrders: "orders in 1C for no sent event",
  journalMismatches: "journal ≠ emulator's store",
};

/** `envs`: each gateway's environment; they differ only in PORT. `register`: where DATABASE_URL points, for humans. */
export function printHeader(
  options: SoakOptions,
  envs: readonly Readonly<Record<string, string>>[],
  register: string,
): void {
  const mode = options.quick ? "--quick" : "default";
  const backend = options.postgres === undefined ? "SQLite" : "PostgreSQL";
  console.log(
    `soak: seed ${options.seed} (${mode}), ${options.events} events over ${options.faultWindowMs / 1000} s, ` +
      `drain limit ${options.drainLimitMs / 1000} s, register on ${backend}`,
  );
  // The seed fixes the schedule and the events; process timing still varies from run to run.
  const server = options.postgres === undefined ? "" : ` --postgres ${withoutPassword(options.postgres)}`;
  const flags = `${options.quick ? "--quick " : ""}--seed ${options.seed} --events ${options.events}${server}`;
  console.log(`same faults and events again: npm run soak -- ${flags}`);
  const shown = Object.keys(envs[0] ?? {}).map((name) => {
    const values = [...new Set(envs.map((env) => env[name] ?? ""))];
    if (name === "SENDER_TOKENS") return `${name}=soak-shop:…`;
    return `${name}=${name === "DATABASE_URL" ? register : values.join(",")}`;
  });
  console.log(`gateway environment (everything else at its default): ${shown.join(" ")}`);
}

function withoutPassword(url: string): string {
  return describeLocation({ kind: "postgres", url });
}

export function printFaults(done: readonly FaultDone[]): void {
  console.log("faults:");
  for (const { fault, startedMs, doneMs, note } of done) {
    const took = doneMs - startedMs > 50 ? ` (over in ${seconds(doneMs - startedMs)})` : "";
    console.log(`  +${seconds(startedMs).padStart(7)}  ${fault.label}${took}${note === undefined ? "" : `: ${note}`}`);
  }
}

export function printFindings(findings: Findings, timings: Timings): void {
  const row = (label: string, value: string | number, note = ""): void =>
    console.log(`${label.padEnd(36)}${String(value).padStart(8)}${note === "" ? "" : `  ${note}`}`);
  console.log("");
  row("sent", findings.sent, `${findings.requests} requests, ${findings.connectionErrors} connection errors`);
  row("acknowledged", findings.acknowledged, `final answers: ${histogram(findings.finalStatuses)}`);
  row("created in 1C", findings.created);
  for (const failure of FIGURES) {
    // The last two are checks of the harness itself: shown only when they fire.
    if (findings.counts[failure] > 0 || !HARNESS_CHECKS.has(failure)) row(LABELS[failure], findings.counts[failure]);
  }
  row("drain time after the last fault", timings.drainMs === undefined ? "never" : seconds(timings.drainMs));
  row("wall time", seconds(timings.wallMs));
  console.log(`register: ${histogram(findings.registerStates)}`);
  for (const failure of FIGURES) {
    for (const sample of findings.samples.get(failure) ?? []) console.log(`  ${LABELS[failure]}: ${sample}`);
  }
}

export function failures(findings: Findings): Failure[] {
  return FIGURES.filter((failure) => findings.counts[failure] > 0);
}

function histogram<K>(map: ReadonlyMap<K, number>): string {
  return [...map.entries()]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([key, n]) => `${key}×${n}`)
    .join(", ");
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
