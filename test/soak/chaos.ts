import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { crashLoop } from "./crash-loop.ts";
import { setOnecFaults } from "./onec-control.ts";
import type { Supervised } from "./processes.ts";
import type { FaultAction, ScheduledFault } from "./schedule.ts";

export interface FaultDone {
  readonly fault: ScheduledFault;
  /** From the start of the load: when it was started and when it was over (restart listening, fault set). */
  readonly startedMs: number;
  readonly doneMs: number;
  /** What it hit, when that is worth saying. */
  readonly note: string | undefined;
}

interface Processes {
  readonly onec: Supervised;
  readonly gateways: readonly Supervised[];
  /** Hands `events` new events to the shop at once; does not wait for their answers. */
  readonly startBurst: (events: number) => void;
}

/**
 * Plays the schedule against the running processes. 1C's actions run one
 * after another (a late emulator restart shifts the windows after it rather
 * than sending faults to a dead port); gateway kills and bursts fire on their
 * own timers. Resolves when every action is over. If one fails (a process
 * that will not start again), nothing more is started, the actions under way
 * finish, and the first failure is thrown.
 */
export async function playFaults(
  schedule: readonly ScheduledFault[],
  processes: Processes,
  loadStartedAt: number,
): Promise<FaultDone[]> {
  const done: FaultDone[] = [];
  const halt = new AbortController();
  // Every scheduled action waits on it at once: dozens of listeners are the design, not a leak.
  setMaxListeners(0, halt.signal);
  const since = () => Math.round(performance.now() - loadStartedAt);
  /** Waits `ms`; false once the run has halted. */
  const until = async (ms: number): Promise<boolean> => {
    if (ms > 0) await sleep(ms, undefined, { signal: halt.signal }).catch(() => {});
    return !halt.signal.aborted;
  };
  const perform = async (fault: ScheduledFault): Promise<void> => {
    const startedMs = since();
    try {
      const note = await act(fault.action, processes, halt.signal);
      done.push({ fault, startedMs, doneMs: since(), note });
    } catch (error) {
      halt.abort();
      throw error;
    }
  };

  const onOwnTimer = (fault: ScheduledFault) => fault.action.kind === "kill_gateway" || fault.action.kind === "burst";
  const independent = schedule.filter(onOwnTimer).map(async (fault) => {
    if (await until(loadStartedAt + fault.atMs - performance.now())) await perform(fault);
  });
  const onecChain = (async () => {
    // A window that overran (a slow restart, a long crash loop) delays the ones after it, which keep their lengths.
    let lagMs = 0;
    for (const fault of schedule.filter((f) => !onOwnTimer(f))) {
      const early = loadStartedAt + fault.atMs + lagMs - performance.now();
      if (early < 0) lagMs -= early;
      if (!(await until(early))) return;
      await perform(fault);
    }
  })();
  const settled = await Promise.allSettled([...independent, onecChain]);
  const failed = settled.find((result) => result.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return done.sort((a, b) => a.startedMs - b.startedMs);
}

async function act(action: FaultAction, processes: Processes, halt: AbortSignal): Promise<string | undefined> {
  switch (action.kind) {
    case "kill_gateway": {
      const gateway = processes.gateways[action.gateway];
      if (gateway === undefined) throw new Error(`no gateway ${action.gateway}`);
      await gateway.killAndRestart();
      return undefined;
    }
    case "kill_onec":
      await processes.onec.killAndRestart(action.downMs);
      return undefined;
    case "onec_faults":
      await setOnecFaults(processes.onec.url, action.patch);
      return undefined;
    case "crash_loop":
      return crashLoop(processes.onec, processes.gateways, action.cutsPerEvent, halt);
    case "burst":
      processes.startBurst(action.events);
      return undefined;
  }
}
