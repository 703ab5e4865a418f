import pino from "pino";
import type { DelivererOptions } from "../../src/delivery/deliverer.ts";
import type { DeliveryPolicy } from "../../src/delivery/retry-policy.ts";
import type { EventRegister } from "../../src/register/port.ts";
import { siteOrderOf } from "./records.ts";

/** The deliverer tests' shared set-up: a policy small enough to run out of, options for a test that drives every step. */

export const silentLog = pino({ level: "silent" });

export const testPolicy: DeliveryPolicy = {
  baseMs: 1000,
  maxDelayMs: 60_000,
  maxAttempts: 5,
  maxAgeMs: 86_400_000,
  maxUnfinishedAttempts: 3,
  maxOnecErrors: 3,
};

/** No poll and a breaker that opens only when told: the test calls pump() and idle() itself. */
export function drivenOptions(options: Partial<DelivererOptions> = {}): DelivererOptions {
  return {
    owner: "worker-a",
    concurrency: 4,
    leaseMs: 1000,
    pollMs: 3_600_000,
    breaker: { failureThreshold: 1000, cooldownMs: 10_000, maxCooldownMs: 60_000 },
    ...options,
  };
}

/** Records an event as an accepted request would, with a body that names it. */
export async function recordEvent(register: EventRegister, eventId: string, now: number): Promise<void> {
  await register.reserve({
    sender: "default",
    eventId,
    fingerprint: "fp",
    policyVersion: "v1",
    body: `{"event_id":"${eventId}"}`,
    ...siteOrderOf(`{"event_id":"${eventId}"}`),
    correlationId: `corr-${eventId}`,
    now,
  });
}
