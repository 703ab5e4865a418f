import { setTimeout as sleep } from "node:timers/promises";

const POLL_MS = 50;

/**
 * Asks `probe` every 50 ms until it gives a value, and returns it; fails
 * naming `what` after `timeoutMs`. For state in other processes (a register
 * row, an instance's readiness) that sends no event to wait on.
 */
export async function pollUntil<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(POLL_MS);
  }
}
