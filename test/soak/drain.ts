import { setTimeout as sleep } from "node:timers/promises";
import type { RegisterReader } from "./register.ts";

const POLL_MS = 200;

/**
 * Waits for the shop's last final answer, then for the sender's backlog in
 * the register to empty: those are other processes' commits, so there is
 * nothing to await but the register itself. Returns when both held, or undefined at the
 * deadline (performance.now() time).
 */
export async function drained(
  shopDone: Promise<void>,
  register: RegisterReader,
  sender: string,
  deadline: number,
): Promise<number | undefined> {
  const timeLeft = () => Math.max(0, deadline - performance.now());
  // Unref'd: once the shop is done, this timer must not keep the process alive until the deadline.
  const shopFinished = await Promise.race([shopDone.then(() => true), sleep(timeLeft(), false, { ref: false })]);
  if (!shopFinished) return undefined;
  for (;;) {
    if ((await register.pending(sender)) === 0) return performance.now();
    if (timeLeft() === 0) return undefined;
    await sleep(Math.min(POLL_MS, timeLeft()));
  }
}
