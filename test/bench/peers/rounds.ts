import { measuredLoad } from "../cpu-profile.ts";
import { type LoadRun, type Requests, runLoad } from "../load.ts";
import type { Server } from "../processes.ts";
import { sampleRss } from "../rss.ts";

/**
 * The peers and webhook scenarios' measurement: several contenders, each a server in its
 * own process kept alive throughout, loaded in turn in short rounds so that
 * a busy spell on a small shared machine falls on all of them, not on one.
 * For each workload: a warm-up per contender (not reported), then `rounds`
 * rounds, in each of which every contender gets `roundSeconds` of the same
 * load alone; the contenders' order turns by one each round, so none is
 * always first after another's load. A contender's figure is the median
 * of its rounds.
 */

export const WORKLOADS = ["new", "repeat", "conflict"] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface Contender<W extends string = Workload> {
  readonly name: string;
  readonly server: Server;
  /** What each workload sends it, and the one status it must answer. */
  readonly requests: Readonly<Record<W, Requests>>;
  /** Its measured runs count in its CPU profile's summary (a gateway's, under BENCH_PROFILE). */
  readonly profiled?: boolean;
}

export interface RoundSettings {
  readonly connections: number;
  readonly rounds: number;
  readonly roundSeconds: number;
  readonly warmupSeconds: number;
}

/** One contender's runs of one workload. */
export interface ContenderRuns {
  readonly name: string;
  readonly server: Server;
  readonly expectedStatus: number;
  readonly warmup: LoadRun;
  readonly rounds: readonly LoadRun[];
  /** The highest VmRSS of its process during its measured rounds of this workload. */
  readonly peakRss: number | undefined;
}

export type WorkloadRuns<W extends string = Workload> = Readonly<Record<W, readonly ContenderRuns[]>>;

/** Each of `workloads` in turn, all its rounds before the next workload. */
export async function runRounds<W extends string>(
  contenders: readonly Contender<W>[],
  workloads: readonly W[],
  settings: RoundSettings,
  progress: (line: string) => void,
): Promise<WorkloadRuns<W>> {
  const runs = {} as Record<W, ContenderRuns[]>;
  for (const workload of workloads) runs[workload] = await runWorkload(contenders, workload, settings, progress);
  return runs;
}

async function runWorkload<W extends string>(
  contenders: readonly Contender<W>[],
  workload: W,
  settings: RoundSettings,
  progress: (line: string) => void,
): Promise<ContenderRuns[]> {
  const load = (contender: Contender<W>, durationSeconds: number) =>
    runLoad(
      [contender.server.url],
      { connections: settings.connections, durationSeconds },
      contender.requests[workload],
    );
  progress(
    `${workload}: ${settings.warmupSeconds} s warm-up each, then ${settings.rounds} rounds of ${settings.roundSeconds} s each`,
  );
  const warmups: LoadRun[] = [];
  for (const contender of contenders) warmups.push(await load(contender, settings.warmupSeconds));
  const rounds: LoadRun[][] = contenders.map(() => []);
  const peaks: (number | undefined)[] = contenders.map(() => undefined);
  for (let round = 0; round < settings.rounds; round++) {
    for (let turn = 0; turn < contenders.length; turn++) {
      const index = (round + turn) % contenders.length;
      const contender = contenders[index] as Contender<W>;
      const memory = sampleRss([contender.server.child.pid]);
      const run = contender.profiled
        ? await measuredLoad(() => load(contender, settings.roundSeconds), contender.server.name)
        : await load(contender, settings.roundSeconds);
      peaks[index] = larger(peaks[index], memory.stop());
      rounds[index]?.push(run);
    }
    const rates = contenders.map((contender, i) => `${contender.name} ${rate(rounds[i]?.at(-1))}`);
    progress(`${workload} round ${round + 1}: ${rates.join(", ")} req/s`);
  }
  return contenders.map((contender, i) => ({
    name: contender.name,
    server: contender.server,
    expectedStatus: contender.requests[workload].expectedStatus,
    warmup: warmups[i] as LoadRun,
    rounds: rounds[i] ?? [],
    peakRss: peaks[i],
  }));
}

function rate(run: LoadRun | undefined): string {
  return run === undefined ? "n/a" : run.result.requests.average.toFixed(0);
}

function larger(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/** The middle value; of an even count, the mean of the two middle ones. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
