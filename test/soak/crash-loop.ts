import { setTimeout as sleep } from "node:timers/promises";
import { hangingKeys, setOnecFaults } from "./onec-control.ts";
import type { Supervised } from "./processes.ts";

/** A crash-loop round waits this long for calls to hang, then gives up (and is not counted). */
const HANG_WAIT_MS = 4_000;
/**
 * How long other calls may hang while the round waits for the previous
 * victims to hang again: under ONEC_TIMEOUT_MS (1.5 s), so they are still
 * unfinished when the kill comes.
 */
const HANG_SETTLE_MS = 700;
/** The crash loop's bound: twice the kills it aims at, for when other events' calls hang in between. */
const CRASH_LOOP_MAX_KILLS = 6;
/** Restarts take seconds on a busy machine: past this, the crash loop stops starting rounds. */
const CRASH_LOOP_BUDGET_MS = 20_000;
/** Rounds a crash loop may skip for want of hanging calls. */
const CRASH_LOOP_SPARE_ROUNDS = 2;
/** The emulator is another process: its hanging calls can only be polled. */
const HANG_POLL_MS = 50;

/**
 * Kills both gateways while 1C holds calls open after committing, again and
 * again, preferring the moment the events already cut hang once more: each
 * kill leaves their attempts unfinished, as a poison event would. Stops once
 * some event has been cut `target` times (then the gateway must decide about
 * it), or after CRASH_LOOP_MAX_KILLS.
 */
export async function crashLoop(
  onec: Supervised,
  gateways: readonly Supervised[],
  target: number,
  halt: AbortSignal,
): Promise<string> {
  await setOnecFaults(onec.url, { hangAfterCommit: true });
  const cuts = new Map<string, number>();
  const budgetEnds = performance.now() + CRASH_LOOP_BUDGET_MS;
  let kills = 0;
  let calls = 0;
  // A round without hanging calls (nothing due, or the breakers open) kills nothing: skipped, a few times at most.
  for (
    let round = 0;
    round < CRASH_LOOP_MAX_KILLS + CRASH_LOOP_SPARE_ROUNDS && performance.now() < budgetEnds && !halt.aborted;
    round++
  ) {
    const hanging = await hangingCalls(onec.url, cuts.size === 0 ? undefined : new Set(cuts.keys()));
    if (hanging.length === 0) continue;
    for (const key of hanging) cuts.set(key, (cuts.get(key) ?? 0) + 1);
    kills += 1;
    calls += hanging.length;
    await Promise.all(gateways.map((gateway) => gateway.killAndRestart()));
    if (kills >= CRASH_LOOP_MAX_KILLS || Math.max(...cuts.values()) >= target) break;
  }
  const poisoned = [...cuts.values()].filter((n) => n >= target).length;
  return `${kills} kills cut ${calls} hanging calls; ${poisoned} events cut ${target} times`;
}

/**
 * The keys of the calls 1C holds open: at once when one of `prefer` hangs
 * again, else once calls have hung for HANG_SETTLE_MS (the kill must come
 * before ONEC_TIMEOUT_MS ends them), else nothing after HANG_WAIT_MS.
 */
async function hangingCalls(onecUrl: string, prefer: ReadonlySet<string> | undefined): Promise<string[]> {
  const until = performance.now() + HANG_WAIT_MS;
  let hangingSince: number | undefined;
  for (;;) {
    const keys = await hangingKeys(onecUrl);
    const now = performance.now();
    hangingSince = keys.length === 0 ? undefined : (hangingSince ?? now);
    if (prefer !== undefined && keys.some((key) => prefer.has(key))) return keys;
    if (hangingSince !== undefined && (prefer === undefined || now - hangingSince >= HANG_SETTLE_MS)) return keys;
    if (now >= until) return keys;
    await sleep(HANG_POLL_MS);
  }
}
