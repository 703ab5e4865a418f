import type { Logger } from "pino";
import { excerpt } from "../onec/classify-response.ts";
import type { OnecClient } from "../onec/client.ts";
import type { OnecOutcome } from "../onec/outcome.ts";
import type { AttemptReport, Claim, EventRecord, EventRegister } from "../register/port.ts";
import { type DeliveryPolicy, settlementFor } from "./retry-policy.ts";

export interface AttemptDeps {
  register: EventRegister;
  onec: Pick<OnecClient, "sendOrderPaid">;
  policy: DeliveryPolicy;
  now: () => number;
  log: Logger;
}

export interface AttemptResult {
  /** The record after the attempt: ours if the lease held, the newer claim's if not. */
  record: EventRecord;
  outcome: OnecOutcome;
  leaseLost: boolean;
  durationMs: number;
}

/** Unique across senders, since 1C keeps one register for all of them. */
export function onecIdempotencyKey(sender: string, eventId: string): string {
  return sender === "default" ? eventId : `${sender}/${eventId}`;
}

/**
 * One delivery attempt under a lease: POST the accepted bytes to 1C (no
 * transaction is open meanwhile), then write the outcome if the lease is
 * still ours. Never throws for anything 1C does; only lost storage throws.
 */
export async function attemptDelivery(deps: AttemptDeps, claim: Claim): Promise<AttemptResult> {
  const { record, lease } = claim;
  const log = deps.log.child({
    correlation_id: record.correlationId,
    event_id: record.eventId,
    sender: record.sender,
    attempt: record.attempts,
  });
  const startedAt = deps.now();
  const outcome = await deps.onec.sendOrderPaid({
    idempotencyKey: onecIdempotencyKey(record.sender, record.eventId),
    body: record.body,
    correlationId: record.correlationId,
  });
  const finishedAt = deps.now();
  const report = reportOf(outcome, startedAt, finishedAt - startedAt);
  logOutcome(log, outcome, report.durationMs);
  const settled = await deps.register.settle(
    lease,
    settlementFor(deps.policy, record, outcome, finishedAt),
    report,
    finishedAt,
  );
  const { durationMs } = report;
  if (settled !== undefined) return { record: settled, outcome, leaseLost: false, durationMs };
  // A newer claim owns the event now (our lease expired): its result stands.
  log.warn({ lease_token: lease.token }, "delivery lease lost; outcome kept in the attempt history only");
  const current = (await deps.register.find(record.sender, record.eventId)) ?? record;
  return { record: current, outcome, leaseLost: true, durationMs };
}

function reportOf(outcome: OnecOutcome, startedAt: number, durationMs: number): AttemptReport {
  switch (outcome.kind) {
    case "delivered":
      return {
        startedAt,
        durationMs,
        outcome: "delivered",
        httpStatus: outcome.httpStatus,
        detail: outcome.order.number,
      };
    case "rejected":
      return {
        startedAt,
        durationMs,
        outcome: "rejected",
        httpStatus: outcome.httpStatus,
        errorClass: outcome.code,
        detail: excerpt(outcome.message),
      };
    case "conflict":
    case "unauthorized":
      return {
        startedAt,
        durationMs,
        outcome: outcome.kind,
        httpStatus: outcome.httpStatus,
        detail: excerpt(outcome.message),
      };
    case "retryable":
      return {
        startedAt,
        durationMs,
        outcome: "retryable",
        httpStatus: outcome.httpStatus,
        errorClass: outcome.errorClass,
        detail: excerpt(outcome.message),
      };
  }
}

function logOutcome(log: Logger, outcome: OnecOutcome, durationMs: number): void {
  const fields = { onec_outcome: outcome.kind, onec_status: outcome.httpStatus, duration_ms: durationMs };
  if (outcome.kind === "unauthorized") log.error(fields, `1C refused our credentials: ${outcome.message}`);
  else if (outcome.kind === "retryable") log.warn({ ...fields, error_class: outcome.errorClass }, outcome.message);
  else log.info(fields, "1C answered");
}
