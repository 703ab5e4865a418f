import type { EmulatorFaults } from "../../src/onec-emulator/emulator.ts";
import type { Prng } from "./prng.ts";

export type FaultAction =
  | { readonly kind: "kill_gateway"; readonly gateway: number }
  /** Sets (or clears) the emulator's faults through its control endpoint. */
  | { readonly kind: "onec_faults"; readonly patch: Partial<EmulatorFaults> }
  /** kill -9 of the emulator; it stays down `downMs`, then starts again on its journal. */
  | { readonly kind: "kill_onec"; readonly downMs: number }
  /**
   * 1C hangs after committing, and both gateways are killed while calls hang,
   * the same events' calls whenever they hang again, until some event's calls
   * were cut `cutsPerEvent` times: as if those events crashed the process.
   */
  | { readonly kind: "crash_loop"; readonly cutsPerEvent: number }
  /** A flash sale: `events` new events at once, each sent to both gateways together. */
  | { readonly kind: "burst"; readonly events: number };

export interface ScheduledFault {
  /** From the start of the load. */
  readonly atMs: number;
  readonly action: FaultAction;
  readonly label: string;
}

const CLEAR: Partial<EmulatorFaults> = { latencyMs: 0, unavailable: false, hangAfterCommit: false };

/** What happens to 1C, one window at a time: an emulator restart forgets its faults, so windows never overlap. */
export type OnecWindow = "outage" | "latency" | "hang" | "kill" | "crash_loop";

/** The gateway's default MAX_UNFINISHED_ATTEMPTS: an event cut this often must then be decided about. */
const CRASH_LOOP_KILLS = 3;
/** A gateway takes a few seconds to restart on a busy 2-core machine; the loop waits for each. */
const RESTART_ALLOWANCE_MS = 4_000;

export interface FaultMix {
  readonly onecWindows: readonly OnecWindow[];
  readonly gatewayKills: number;
  /** Sizes of the bursts of new events, one entry per burst. */
  readonly bursts: readonly number[];
}

/**
 * The run's faults, all drawn from the seed: the mix's 1C windows (an outage,
 * latency, hang-after-commit, a kill -9 of the emulator, a crash loop) in a
 * random order with random gaps; kill -9 of random gateways at random times,
 * some of them while 1C hangs after committing; bursts of new events.
 * Everything is planned to end before `windowMs`; restarts that take longer
 * push the 1C windows after them (see chaos.ts).
 */
export function faultSchedule(prng: Prng, windowMs: number, mix: FaultMix): ScheduledFault[] {
  const leadInMs = Math.round(windowMs * 0.1);
  const tailMs = 2_000;
  const windows = prng.shuffle(mix.onecWindows);
  const lengths = windows.map((window) => windowLength(prng, window));
  const slack = windowMs - leadInMs - tailMs - lengths.reduce((sum, ms) => sum + ms, 0);
  if (slack < 0) throw new Error(`fault window of ${windowMs} ms is too short for ${windows.length} 1C faults`);
  // Random gaps: the slack split by random weights, one gap before each window and one after the last.
  const weights = Array.from({ length: windows.length + 1 }, () => prng.next() + 0.1);
  const weightSum = weights.reduce((sum, w) => sum + w, 0);

  const faults: ScheduledFault[] = [];
  let at = leadInMs;
  windows.forEach((window, i) => {
    at += Math.round((slack * (weights[i] ?? 0)) / weightSum);
    const length = lengths[i] ?? 0;
    faults.push(...onecWindow(prng, window, at, length));
    if (window === "hang") {
      // Kills while calls hang after 1C committed: their attempts never finish.
      for (let k = prng.int(0, 2); k > 0; k--) faults.push(gatewayKill(prng, at + prng.int(300, length - 100)));
    }
    at += length;
  });
  for (let k = 0; k < mix.gatewayKills; k++) faults.push(gatewayKill(prng, prng.int(leadInMs, windowMs - tailMs)));
  for (const events of mix.bursts) {
    const atMs = prng.int(leadInMs, windowMs - tailMs);
    faults.push({
      atMs,
      action: { kind: "burst", events },
      label: `burst: ${events} new events, each sent to both gateways at once`,
    });
  }
  return faults.sort((a, b) => a.atMs - b.atMs);
}

function windowLength(prng: Prng, window: OnecWindow): number {
  switch (window) {
    case "outage":
      return prng.int(2_000, 5_000);
    case "latency":
      return prng.int(3_000, 6_000);
    case "hang":
      return prng.int(2_000, 4_000);
    case "kill":
      // Down time plus the restart, which takes a second or two of its own.
      return prng.int(500, 1_500) + 2_500;
    case "crash_loop":
      return CRASH_LOOP_KILLS * RESTART_ALLOWANCE_MS + (CRASH_LOOP_KILLS + 1) * 1_000;
  }
}

function onecWindow(prng: Prng, window: OnecWindow, at: number, length: number): ScheduledFault[] {
  const end = {
    atMs: at + length,
    action: { kind: "onec_faults", patch: CLEAR },
    label: "1C: faults cleared",
  } as const;
  switch (window) {
    case "outage": {
      const retryAfterSeconds = prng.int(1, 3);
      return [
        {
          atMs: at,
          action: { kind: "onec_faults", patch: { unavailable: true, retryAfterSeconds } },
          label: `1C outage for ${length} ms (503, Retry-After: ${retryAfterSeconds})`,
        },
        end,
      ];
    }
    case "latency": {
      const latencyMs = prng.int(300, 2_500);
      return [
        {
          atMs: at,
          action: { kind: "onec_faults", patch: { latencyMs } },
          label: `1C latency ${latencyMs} ms for ${length} ms`,
        },
        end,
      ];
    }
    case "hang":
      return [
        {
          atMs: at,
          action: { kind: "onec_faults", patch: { hangAfterCommit: true } },
          label: `1C hang-after-commit for ${length} ms`,
        },
        end,
      ];
    case "kill": {
      const downMs = length - 2_500;
      return [{ atMs: at, action: { kind: "kill_onec", downMs }, label: `1C kill -9, down ${downMs} ms, restart` }];
    }
    case "crash_loop":
      return [
        {
          atMs: at,
          action: { kind: "crash_loop", cutsPerEvent: CRASH_LOOP_KILLS },
          label: `crash loop: 1C hangs after commit; both gateways kill -9 while calls hang, until an event was cut ${CRASH_LOOP_KILLS}×`,
        },
        end,
      ];
  }
}

function gatewayKill(prng: Prng, atMs: number): ScheduledFault {
  const gateway = prng.int(0, 1);
  return { atMs, action: { kind: "kill_gateway", gateway }, label: `gateway ${"AB"[gateway]} kill -9, restart` };
}
