import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { loadConfig } from "../../src/config/load-config.ts";
import { EventStatus, isFinished } from "../../src/domain/event-status.ts";
import { createDeliveryStack } from "../../src/gateway.ts";
import { createLogger } from "../../src/observability/logger.ts";

/**
 * The drain scenario's worker (see drain.ts): the production delivery stack
 * on a register full of due events, configured by the same environment as the
 * gateway. Once the stack is open it sends "ready" over IPC and starts
 * delivering on "go", so that several workers start at one instant. Prints
 * {"delivered": N, "startedAt": S, "finishedAt": F} on stdout once nothing is
 * pending, S and F in epoch milliseconds (comparable across workers); S is
 * deliverer.start(), F this worker's last final settle, so the 100 ms poll
 * below does not round it. Logs go to stderr, keeping stdout for the result.
 */

const POLL_MS = 100;
const STALL_LIMIT_MS = 30_000;

const config = loadConfig(process.env);
const stack = await createDeliveryStack(config, createLogger(config.logLevel, pino.destination(2)));
await startSignal();

let delivered = 0;
const startedAt = epochNow();
let finishedAt = startedAt;
let progressAt = startedAt;
stack.deliverer.on("settled", (record) => {
  if (!isFinished(record.status)) return; // a retry is not progress
  if (record.status === EventStatus.SUCCEEDED) delivered += 1;
  finishedAt = epochNow();
  progressAt = finishedAt;
});

stack.deliverer.start();
let stalled = false;
let pendingBefore = Number.POSITIVE_INFINITY;
// An attempt in flight is a pending event, so the register is asked only when the deliverer is idle:
// its query would otherwise compete with the deliverer for this process's one thread.
for (;;) {
  if (stack.deliverer.inFlight === 0) {
    const { pending } = await stack.register.backlog();
    if (pending === 0) break;
    // Another worker's settles are progress too: this one may just have nothing left to claim.
    if (pending < pendingBefore) progressAt = epochNow();
    pendingBefore = pending;
  }
  // A broken 1C would leave events waiting for retries for hours: give up instead.
  if (epochNow() - progressAt > STALL_LIMIT_MS) {
    stalled = true;
    break;
  }
  await sleep(POLL_MS);
}
await stack.close();

if (stalled) {
  console.error(`drain stalled: nothing finished for ${STALL_LIMIT_MS} ms, ${delivered} delivered here`);
  process.exitCode = 1;
} else {
  process.stdout.write(`${JSON.stringify({ delivered, startedAt, finishedAt })}\n`);
}

/** Milliseconds since the epoch, at performance.now()'s resolution. */
function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Ready over IPC, then wait for the parent's go; the channel is closed after it so it keeps nothing alive. */
async function startSignal(): Promise<void> {
  if (process.send === undefined) return; // run by hand: start at once
  const go = once(process, "message");
  process.send("ready");
  await go;
  process.disconnect();
}
