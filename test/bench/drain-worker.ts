import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { loadConfig } from "../../src/config/load-config.ts";
import { createDeliveryStack } from "../../src/gateway.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { EventStatus, isFinished } from "../../src/register/event-status.ts";
import type { EventRegister } from "../../src/register/port.ts";

/**
 * The drain scenario's worker (see drain.ts): the production delivery stack
 * on a register full of due events, configured by the same environment as the
 * gateway. Prints {"delivered": N, "ms": T} on stdout once nothing is pending;
 * T runs from deliverer.start() to the last event's final settle, so the
 * 100 ms poll below does not round it. Logs go to stderr, keeping stdout for the result.
 */

const POLL_MS = 100;
const STALL_LIMIT_MS = 30_000;

const config = loadConfig(process.env);
const stack = await createDeliveryStack(config, createLogger(config.logLevel, pino.destination(2)));
let delivered = 0;
const startedAt = performance.now();
let lastFinishedAt = startedAt;
stack.deliverer.on("settled", (record) => {
  if (!isFinished(record.status)) return; // a retry is not progress
  if (record.status === EventStatus.SUCCEEDED) delivered += 1;
  lastFinishedAt = performance.now();
});

stack.deliverer.start();
let stalled = false;
// An attempt in flight is a pending event, so the register is asked only when the deliverer is idle:
// its query would otherwise compete with the deliverer for this process's one thread.
while (stack.deliverer.inFlight > 0 || (await pending(stack.register))) {
  // A broken 1C would leave events waiting for retries for hours: give up instead.
  if (performance.now() - lastFinishedAt > STALL_LIMIT_MS) {
    stalled = true;
    break;
  }
  await sleep(POLL_MS);
}
await stack.close();

if (stalled) {
  console.error(`drain stalled: no event finished for ${STALL_LIMIT_MS} ms, ${delivered} delivered`);
  process.exitCode = 1;
} else {
  process.stdout.write(`${JSON.stringify({ delivered, ms: Math.round(lastFinishedAt - startedAt) })}\n`);
}

async function pending(register: EventRegister): Promise<boolean> {
  for (const status of [EventStatus.PROCESSING, EventStatus.FAILED_RETRYABLE]) {
    if ((await register.list({ status, limit: 1 })).length > 0) return true;
  }
  return false;
}
