import type autocannon from "autocannon";
import { RSS_GOAL, RSS_GOAL_MB } from "../accept-report.ts";
import { describeRatioGoal, type GoalLine, goalNote, type RatioGoal, ratioLine, ratioMet } from "../goals.ts";
import { tail } from "../processes.ts";
import { megabytes } from "../rss.ts";
import { type ContenderRuns, median, type Workload, type WorkloadRuns } from "./rounds.ts";

/** The tables, ratios, goals and verdict of the scenarios measured in rounds: peers, webhook. */

export const WORKLOAD_TITLES: Readonly<Record<Workload, string>> = {
  new: "new events (every request a new event_id)",
  repeat: "repeats of a finished event (every request repeats one already recorded, identical body)",
  conflict: "the 409 case (every request reuses a recorded event_id with another body)",
};

/** A goal on the gateway's median req/s divided by a peer's, for one workload. */
export interface PeerGoal<W extends string = Workload> {
  readonly workload: W;
  readonly peer: string;
  readonly goal: RatioGoal;
}

export interface PeersReport<W extends string = Workload> {
  /** The scenario's name, in its headings and failures. */
  readonly scenario: string;
  /** Each workload's title, in the order the workloads ran. */
  readonly titles: Readonly<Record<W, string>>;
  readonly runs: WorkloadRuns<W>;
  /** The contender the ratios are of. */
  readonly gateway: string;
  /** Each contender's durability, for the table. */
  readonly durable: Readonly<Record<string, string>>;
  readonly goals: readonly PeerGoal<W>[];
}

function workloadsOf<W extends string>(titles: Readonly<Record<W, string>>): W[] {
  return Object.keys(titles) as W[];
}

/** A contender's figures for one workload: the medians of its rounds. */
interface Medians {
  readonly rate: number | undefined;
  readonly p50: number | undefined;
  readonly p99: number | undefined;
}

function medians(runs: ContenderRuns): Medians {
  const results = runs.rounds.map((run) => run.result);
  return {
    rate: median(results.map((r) => r.requests.average)),
    p50: median(results.map((r) => r.latency.p50)),
    p99: median(results.map((r) => r.latency.p99)),
  };
}

export function printPeers<W extends string>({
  scenario,
  titles,
  runs,
  gateway,
  durable,
  goals,
}: PeersReport<W>): void {
  for (const workload of workloadsOf(titles)) {
    const contenders = runs[workload];
    console.log("");
    console.log(`${scenario}, ${titles[workload]}:`);
    printWorkloadTable(contenders, durable);
    const ours = contenders.find((each) => each.name === gateway);
    if (ours === undefined) continue;
    const ourRate = medians(ours).rate;
    for (const peer of contenders) {
      if (peer === ours) continue;
      const ratio = rateRatio(ourRate, medians(peer).rate);
      const goal = goals.find((each) => each.workload === workload && each.peer === peer.name)?.goal;
      const note = goal === undefined ? "" : `  ${goalNote(describeRatioGoal(goal), ratioMet(ratio, goal))}`;
      const paired = ours.rounds.map((run, i) =>
        formatRatio(rateRatio(run.result.requests.average, peer.rounds[i]?.result.requests.average)),
      );
      console.log(
        `  ratio ${gateway}/${peer.name}: ${formatRatio(ratio)} (median req/s; round by round ${paired.join(" ")})${note}`,
      );
    }
    console.log(`  peak RSS of ${gateway}: ${megabytes(ours.peakRss)} MB; ${goalNote(RSS_GOAL, rssMet(ours.peakRss))}`);
  }
}

function printWorkloadTable(contenders: readonly ContenderRuns[], durable: Readonly<Record<string, string>>): void {
  const header = [
    "contender",
    "durable",
    "req/s median",
    "rounds req/s",
    "p50 ms",
    "p99 ms",
    "expected",
    "unexpected",
    "errors/timeouts",
    "statuses",
    "peak RSS MB",
  ];
  const rows = contenders.map((runs) => {
    const { rate, p50, p99 } = medians(runs);
    return [
      runs.name,
      durable[runs.name] ?? "",
      rate === undefined ? "n/a" : rate.toFixed(0),
      runs.rounds.map((run) => run.result.requests.average.toFixed(0)).join(" "),
      p50 === undefined ? "n/a" : String(p50),
      p99 === undefined ? "n/a" : String(p99),
      String(runs.expectedStatus),
      String(sum(runs.rounds.map((run) => run.unexpected))),
      `${sum(runs.rounds.map((run) => run.result.errors))}/${sum(runs.rounds.map((run) => run.result.timeouts))}`,
      statuses(runs.rounds.map((run) => run.result)),
      megabytes(runs.peakRss),
    ];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  for (const row of [header, ...rows]) {
    console.log(
      `  ${row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd()}`,
    );
  }
}

/** The summary's lines: every goal on a ratio to a peer, then the gateway's peak memory over all workloads. */
export function peerGoalLines<W extends string>({
  scenario,
  titles,
  runs,
  gateway,
  goals,
}: PeersReport<W>): GoalLine[] {
  const lines = goals.map(({ workload, peer, goal }) => {
    const contenders = runs[workload];
    const ours = contenders.find((each) => each.name === gateway);
    const theirs = contenders.find((each) => each.name === peer);
    const ratio =
      ours === undefined || theirs === undefined ? undefined : rateRatio(medians(ours).rate, medians(theirs).rate);
    return ratioLine(`${titles[workload].split(" (")[0]}, ${gateway}`, `${peer}, req/s`, ratio, goal);
  });
  const peaks = workloadsOf(titles)
    .flatMap((workload) => runs[workload].filter((each) => each.name === gateway))
    .map((each) => each.peakRss)
    .filter((peak): peak is number => peak !== undefined);
  const peak = peaks.length === 0 ? undefined : Math.max(...peaks);
  lines.push({
    work: `peak RSS under load, ${gateway} (${scenario} scenario)`,
    against: "-",
    figure: `${megabytes(peak)} MB`,
    goal: RSS_GOAL,
    met: rssMet(peak),
  });
  return lines;
}

/** Figures from a contender that failed requests or answered other than expected are not a measurement. */
export function peersVerdict<W extends string>({ scenario, titles, runs }: PeersReport<W>): boolean {
  let ok = true;
  for (const workload of workloadsOf(titles)) {
    for (const contender of runs[workload]) {
      const bad = [contender.warmup, ...contender.rounds].filter((run) => run.unexpected > 0 || run.result.errors > 0);
      if (bad.length === 0) continue;
      ok = false;
      const unexpected = sum(bad.map((run) => run.unexpected));
      const errors = sum(bad.map((run) => run.result.errors));
      console.error(
        `FAIL ${scenario} ${workload} ${contender.name}: ${unexpected} answers other than ${contender.expectedStatus} ` +
          `(${statuses(bad.map((run) => run.result))}), ${errors} errors`,
      );
      console.error(`${contender.name} output (tail):\n${tail(contender.server.logFile)}`);
    }
  }
  return ok;
}

function rateRatio(ours: number | undefined, theirs: number | undefined): number | undefined {
  return ours === undefined || theirs === undefined || theirs <= 0 ? undefined : ours / theirs;
}

function formatRatio(ratio: number | undefined): string {
  return ratio === undefined ? "n/a" : ratio.toFixed(2);
}

function rssMet(peak: number | undefined): boolean | undefined {
  return peak === undefined ? undefined : peak <= RSS_GOAL_MB * 2 ** 20;
}

/** Status counts summed over runs, e.g. "201:51234 409:3". */
function statuses(results: readonly autocannon.Result[]): string {
  const counts = new Map<string, number>();
  for (const result of results) {
    for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) {
      counts.set(code, (counts.get(code) ?? 0) + (count ?? 0));
    }
  }
  return [...counts].map(([code, count]) => `${code}:${count}`).join(" ");
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
