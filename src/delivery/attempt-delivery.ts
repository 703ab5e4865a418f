import type { Logger } from "pino";
import { refusalSnapshot, successSnapshot } from "../http/answers.ts";
import type { OnecClient } from "../onec/client.ts";
import type { OnecOutcome } from "../onec/outcome.ts";
import { EventStatus } from "../register/event-status.ts";
import type { EventRecord, EventRegister, Lease, Settlement } from "../register/port.ts";
import { nextAttemptDelayMs, type RetryPolicy } from "./retry-policy.ts";

export interface AttemptDeps {
  register: EventRegister;
  onec: Pick<OnecClient, "sendOrderPaid">;
  retry: RetryPolicy;
  now: () => number;
  log: Logger;
}

/** Unique across senders, since 1C keeps one register for all of them. */
export function onecIdempotencyKey(sender: string, eventId: string): string {
  return sender === "default" ? eventId : `${sender}/${eventId}`;
}

/**
 * One delivery attempt under a lease: POST to 1C (no transaction is open
 * meanwhile), then write the outcome if the lease is still ours.
 * Returns the record as it stands afterwards.
 */
export async function attemptDelivery(deps: AttemptDeps, record: EventRecord, lease: Lease): Promise<EventRecord> {
  const log = deps.log.child({
    correlation_id: record.correlationId,
    event_id: record.eventId,
    sender: record.sender,
    attempt: record.attempts,
  });
  const started = deps.now();
  const outcome = await deps.onec.sendOrderPaid({
    idempotencyKey: onecIdempotencyKey(record.sender, record.eventId),
    body: record.body,
    correlationId: record.correlationId,
  });
  const settlement = settlementFor(deps.retry, record, outcome, deps.now());
  logOutcome(log, outcome, deps.now() - started);
  const settled = await deps.register.settle(lease, settlement, deps.now());
  if (settled !== undefined) return settled;
  // A newer claim owns the event now (our lease expired): its result stands.
  log.warn({ lease_token: lease.token }, "delivery lease lost; result not written");
  return (await deps.register.find(record.sender, record.eventId)) ?? record;
}

export function settlementFor(retry: RetryPolicy, record: EventRecord, outcome: OnecOutcome, now: number): Settlement {
  switch (outcome.kind) {
    case "delivered":
      return {
        status: EventStatus.SUCCEEDED,
        order: outcome.order,
        response: successSnapshot(record.eventId, outcome.order),
      };
    case "rejected":
      return {
        status: EventStatus.FAILED_FINAL,
        error: `1C rejected the order: ${outcome.code}: ${outcome.message}`,
        response: refusalSnapshot(
          record.eventId,
          "GW_ERR_ONEC_REJECTED",
          `1C refused the order: ${outcome.message}`,
          { code: outcome.code, message: outcome.message },
          record.correlationId,
        ),
      };
    case "conflict":
      return {
        status: EventStatus.FAILED_FINAL,
        error: `1C holds this event id with another body: ${outcome.message}`,
        response: refusalSnapshot(
          record.eventId,
          "GW_ERR_ONEC_CONFLICT",
          "1C already holds this event id with another body; send a new event_id",
          { code: "EVENT_ID_REUSED", message: outcome.message },
          record.correlationId,
        ),
      };
    case "unauthorized":
      return {
        status: EventStatus.FAILED_RETRYABLE,
        error: `configuration: ${outcome.message}`,
        nextAttemptAt: now + nextAttemptDelayMs(retry, record.attempts, undefined),
      };
    case "retryable":
      return {
        status: EventStatus.FAILED_RETRYABLE,
        error: `${outcome.errorClass}: ${outcome.message}`,
        nextAttemptAt: now + nextAttemptDelayMs(retry, record.attempts, outcome.retryAfterMs),
      };
  }
}

function logOutcome(log: Logger, outcome: OnecOutcome, durationMs: number): void {
  const fields = { onec_outcome: outcome.kind, onec_status: outcome.httpStatus, duration_ms: durationMs };
  if (outcome.kind === "unauthorized") log.error(fields, outcome.message);
  else if (outcome.kind === "retryable") log.warn({ ...fields, error_class: outcome.errorClass }, outcome.message);
  else log.info(fields, "1C answered");
}
