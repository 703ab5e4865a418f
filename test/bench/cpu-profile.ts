import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { REST, stageOf } from "./request-budget.ts";

/**
 * BENCH_PROFILE=1: the gateways and drain workers run with `--cpu-prof`, and
 * each profile is summed up here as its top self-time entries, counting only
 * the samples taken while a measured load ran (start-up, tsx compiling the
 * sources and the warm-up would otherwise lead the list). Also by hand, for
 * a bench's profile dir (the same samples) or single files (whole profiles):
 *   node --import tsx test/bench/cpu-profile.ts DIR_OR_FILE.cpuprofile…
 */

const ROOT = new URL("../../", import.meta.url).pathname;
const TOP = 15;

/** The V8 .cpuprofile format, as far as the summary reads it. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: CallFrame;
    readonly children?: readonly number[];
  }[];
  /** Microseconds on the monotonic clock that process.hrtime() reads, in every process of the machine. */
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface Window {
  readonly from: number;
  readonly to: number;
  /** The one process whose profile the window is for (its folder's name); unset, every process's. */
  readonly processName?: string;
}

/** When measured loads ran, in the profiles' time base; empty: whole profiles count. */
const measuredWindows: Window[] = [];

/**
 * Runs a measured load, noting when it ran: the summary counts only samples
 * taken meanwhile, in every process's profile or, given its name, in that
 * process's only (contenders loaded in turn: one's load is not the other's).
 */
export async function measuredLoad<T>(run: () => Promise<T>, processName?: string): Promise<T> {
  const from = monotonicMicros();
  try {
    return await run();
  } finally {
    measuredWindows.push({ from, to: monotonicMicros(), ...(processName === undefined ? {} : { processName }) });
  }
}

function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Node options that write the process's profiles into `dir`/`name` when it
 * exits; none without a dir. A folder per process, under node's own file
 * names: every thread writes one (tsx's loader thread too), and a fixed
 * --cpu-prof-name would let the last to exit overwrite the main thread's.
 */
export function cpuProfileArgs(dir: string | undefined, name: string): string[] {
  return dir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(dir, name)}`];
}

/** Kept next to the profiles, so that summing them up again by hand counts the same samples. */
const WINDOWS_FILE = "measured-windows.json";

/** Node's default name ends in .<pid>.<thread id>.<seq>.cpuprofile; the main thread is 0. */
const MAIN_THREAD = /\.\d+\.0\.\d+\.cpuprofile$/;

/** Prints the summary of every process's main-thread profile under `dir` (cpuProfileArgs's layout). */
export function summarizeProfiles(dir: string): void {
  const windowsFile = join(dir, WINDOWS_FILE);
  if (measuredWindows.length > 0) writeFileSync(windowsFile, JSON.stringify(measuredWindows));
  else if (existsSync(windowsFile))
    measuredWindows.push(...(JSON.parse(readFileSync(windowsFile, "utf8")) as Window[]));
  const processes = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  for (const { name } of processes.sort((a, b) => a.name.localeCompare(b.name))) {
    const main = readdirSync(join(dir, name)).find((file) => MAIN_THREAD.test(file));
    if (main === undefined) console.log(`\n${name}: no main-thread profile (a process killed by a signal writes none)`);
    else summarizeProfile(join(dir, name, main), name);
  }
}

/**
 * Self time per function (file and line), and per area (a package, the
 * gateway's own src/, node's internals), as shares of the busy time: the
 * sampled time minus (idle).
 */
export function summarizeProfile(file: string, label = basename(file)): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parents = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id])));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  const byStage = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    at += micros;
    if (!measured(at, label)) return;
    const frame = frames.get(id);
    total += micros;
    if (frame === undefined) return;
    if (frame.functionName === "(idle)") {
      idle += micros;
      return;
    }
    // A native function (a socket write, say) is named with the code that called it, through node's internals.
    const caller = frame.url === "" ? callerOutsideNode(id, frames, parents) : undefined;
    const name = caller === undefined ? describe(frame) : `${describe(frame)} ← ${describe(caller)}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byArea.set(area(frame), (byArea.get(area(frame)) ?? 0) + micros);
    const stage = stageOf(stack(id, frames, parents));
    byStage.set(stage, (byStage.get(stage) ?? 0) + micros);
  });
  const busy = total - idle;
  const during = measuredWindows.length === 0 ? "" : " during its measured loads";
  console.log("");
  console.log(
    `${label}: ${(total / 1e6).toFixed(1)} s sampled${during}, ${(busy / 1e6).toFixed(1)} s busy ` +
      `(${share(busy, total)} of the time); self time as a share of the busy time:`,
  );
  console.log(`  by area: ${top(byArea, 8, busy).join(", ")}`);
  for (const line of top(byFunction, TOP, busy)) console.log(`  ${line}`);
  // Only a gateway's profile has the accept path's stages; a drain worker's would be all "the rest".
  if (byStage.size > 1 || !byStage.has(REST)) {
    console.log("  by stage of the accept path (the per-request budget; a sample counts for its innermost stage):");
    for (const line of top(byStage, byStage.size, busy)) console.log(`    ${line}`);
  }
}

/**
 * The names on a sample's stack, innermost first: the gateway's own functions
 * (src/, or dist/ built from it) and V8's entries, so that a package's or
 * node's function of the same name (Array's find, say) counts for no stage.
 */
function* stack(
  id: number,
  frames: ReadonlyMap<number, CallFrame>,
  parents: ReadonlyMap<number, number>,
): Generator<string> {
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const frame = frames.get(at);
    if (frame === undefined) continue;
    const path = shortUrl(frame.url);
    if (path.startsWith("src/") || path.startsWith("dist/") || (path === "" && frame.functionName.startsWith("(")))
      yield frame.functionName;
  }
}

function describe(frame: CallFrame): string {
  const where = shortUrl(frame.url);
  return `${frame.functionName || "(anonymous)"}${where === "" ? "" : `  ${where}:${frame.lineNumber + 1}`}`;
}

/** The nearest caller in the gateway's code or a package, above node's own modules. */
function callerOutsideNode(
  id: number,
  frames: ReadonlyMap<number, CallFrame>,
  parents: ReadonlyMap<number, number>,
): CallFrame | undefined {
  for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
    const frame = frames.get(at);
    if (frame !== undefined && frame.url !== "" && !frame.url.startsWith("node:")) return frame;
  }
  return undefined;
}

function measured(at: number, label: string): boolean {
  return (
    measuredWindows.length === 0 ||
    measuredWindows.some(
      ({ from, to, processName }) => at >= from && at <= to && (processName === undefined || processName === label),
    )
  );
}

function top(totals: Map<string, number>, count: number, busy: number): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => `${share(micros, busy).padStart(5)} ${name}`);
}

function share(part: number, whole: number): string {
  return whole > 0 ? `${((part * 100) / whole).toFixed(1)}%` : "n/a";
}

/** Paths from the repository root; node's own modules as they are. */
function shortUrl(url: string): string {
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

/** node_modules/<package>, src/<dir>, node: internals, or V8's own entries such as (garbage collector). */
function area({ functionName, url }: { functionName: string; url: string }): string {
  const path = shortUrl(url);
  if (path === "") return functionName.startsWith("(") ? functionName : "(native)";
  const nodeModule = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (nodeModule?.[1] !== undefined) return nodeModule[1];
  const source = path.match(/^(src\/[^/]+)\//);
  if (source?.[1] !== undefined) return source[1];
  return path.startsWith("node:") ? "node:internal" : path;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const target of process.argv.slice(2)) {
    if (target.endsWith(".cpuprofile")) summarizeProfile(target);
    else summarizeProfiles(target);
  }
}
