import type { Logger } from "pino";
import { type AttemptTrace, startAttemptTrace } from "../observability/trace-spans.ts";
import { excerpt } from "../onec/classify-response.ts";
import type { OnecClient } from "../onec/client.ts";
import { namedSenderKey } from "../onec/contract/key.ts";
import type { OnecEventLookup, OnecOutcome } from "../onec/outcome.ts";
import type {
  AttemptReport,
  Claim,
  EventRecord,
  EventRegister,
  FinalSettlement,
  Settlement,
} from "../register/port.ts";
import { DEFAULT_SENDER } from "../register/senders.ts";
import {
  type DeliveryPolicy,
  planAttempt,
  settlementAfterLookup,
  unfinishedAttempts,
  verdictFor,
} from "./retry-policy.ts";

export interface AttemptDeps {
  register: EventRegister;
  onec: Pick<OnecClient, "sendOrderPaid" | "lookUpEvent">;
  policy: DeliveryPolicy;
  now: () => number;
  log: Logger;
}

/** What the attempt came to, as metrics count it. */
export type AttemptOutcome = OnecOutcome["kind"] | `lookup_${OnecEventLookup["kind"]}`;

/** Each outcome once: the compiler refuses this table when an outcome is added to the types and not here. */
const EVERY_ATTEMPT_OUTCOME: Record<AttemptOutcome, true> = {
  delivered: true,
  rejected: true,
  conflict: true,
  errored: true,
  unauthorized: true,
  retryable: true,
  lookup_found: true,
  lookup_absent: true,
  lookup_unknown: true,
};

/** Every outcome an attempt can come to: the metrics show each at 0 from the start. */
export const ATTEMPT_OUTCOMES = Object.keys(EVERY_ATTEMPT_OUTCOME) as readonly AttemptOutcome[];

export interface AttemptResult {
  /** The record after the attempt: ours if the lease held, the newer claim's if not. */
  record: EventRecord;
  outcome: AttemptOutcome;
  /** Whether 1C answered as a working service does; the breaker counts the rest as failures. */
  onecAnswered: boolean;
  leaseLost: boolean;
  durationMs: number;
}

/**
 * Unique across senders, since 1C keeps one register for all of them. The default sender keeps the
 * bare event id (events already in 1C's register were delivered under it); the rules are in key.ts.
 */
export function onecIdempotencyKey(sender: string, eventId: string): string {
  return sender === DEFAULT_SENDER ? eventId : namedSenderKey(sender, eventId);
}

/** One call's worth of an attempt: what to write, and what to report. */
interface Step {
  settlement: Settlement;
  report: Omit<AttemptReport, "startedAt" | "durationMs">;
  outcome: AttemptOutcome;
  onecAnswered: boolean;
}

/**
 * One delivery attempt under a lease: POST the accepted bytes to 1C (no
 * transaction is open meanwhile), or ask 1C first when the policy is about to
 * stop the event, then write the outcome if the lease is still ours. Never
 * throws for anything 1C does; only lost storage throws. `callsDone` hears
 * of 1C's part as soon as it is over, before the outcome is written: the
 * deliverer's cap is on calls to 1C, and its next claim can then share the
 * outcome's commit.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  claim: Claim,
  callsDone: (onecAnswered: boolean) => void = () => {},
): Promise<AttemptResult> {
  const { record, lease } = claim;
  const trace = startAttemptTrace(record, { "gateway.attempt": record.attempts });
  const log = deps.log.child({
    correlation_id: record.correlationId,
    event_id: record.eventId,
    sender: record.sender,
    attempt: record.attempts,
    trace_id: trace?.traceId,
  });
  const startedAt = deps.now();
  let step: Step;
  try {
    const plan = planAttempt(deps.policy, record, await lostAheadAttempts(deps, claim));
    step =
      plan.kind === "ask"
        ? await askBeforeEnding(deps, record, plan.ending, log, trace)
        : await deliver(deps, record, log, trace);
  } catch (error) {
    trace?.span?.end(error instanceof Error ? error.message : String(error));
    throw error;
  }
  endAttemptSpan(trace, step);
  const finishedAt = deps.now();
  const durationMs = finishedAt - startedAt;
  callsDone(step.onecAnswered);
  const settled = await deps.register.settle(
    lease,
    step.settlement,
    { startedAt, durationMs, ...step.report },
    finishedAt,
  );
  const { outcome, onecAnswered } = step;
  if (settled !== undefined) return { record: settled, outcome, onecAnswered, leaseLost: false, durationMs };
  // A newer claim owns the event now (our lease expired): its result stands.
  log.warn({ lease_token: lease.token }, "delivery lease lost; outcome kept in the attempt history only");
  const current = (await deps.register.find(record.sender, record.eventId)) ?? record;
  return { record: current, outcome, onecAnswered, leaseLost: true, durationMs };
}

/** The client span ends with 1C's part: its outcome, and ERROR when 1C could not take the event. */
function endAttemptSpan(trace: AttemptTrace | undefined, step: Step): void {
  if (trace?.span === undefined) return;
  trace.span.setAttributes({
    "gateway.attempt.outcome": step.outcome,
    "http.response.status_code": step.report.httpStatus,
  });
  trace.span.end(step.onecAnswered && step.outcome !== "errored" ? undefined : (step.report.detail ?? step.outcome));
}

async function deliver(deps: AttemptDeps, record: EventRecord, log: Logger, trace?: AttemptTrace): Promise<Step> {
  const startedAt = deps.now();
  const outcome = await deps.onec.sendOrderPaid({
    idempotencyKey: onecIdempotencyKey(record.sender, record.eventId),
    body: record.body,
    correlationId: record.correlationId,
    trace: trace?.context,
  });
  logOutcome(log, outcome, deps.now() - startedAt);
  const report = reportOf(outcome);
  const answered = outcome.kind !== "retryable" && outcome.kind !== "unauthorized";
  const onecErrors = outcome.kind === "errored" ? (await earlierOnecErrors(deps.register, record)) + 1 : 0;
  const verdict = verdictFor(deps.policy, record, outcome, deps.now(), Math.random, onecErrors);
  if (verdict.kind === "settle")
    return { settlement: verdict.settlement, report, outcome: outcome.kind, onecAnswered: answered };
  // The last call's fate is unknown: 1C may hold the order although we never heard so.
  const asked = await askBeforeEnding(deps, record, verdict.ending, log, trace);
  return {
    ...asked,
    report: { ...report, detail: `${report.detail ?? ""}; then ${asked.report.detail}` },
    // A 1C that answers reads while its posting times out (a long lock, maintenance) is not back:
    // were the lookup's answer to close the breaker, every held-back retry would go at once,
    // time out, and be charged, at each event's last attempt.
    onecAnswered: answered && asked.onecAnswered,
  };
}

/**
 * 1C's PROCESSING_ERROR answers earlier in this round, from the attempt log: read only when 1C has
 * just answered one, so the common path costs nothing. The round's attempts are the last
 * `roundAttempts` by number (this one, not yet written, is the last of them).
 */
async function earlierOnecErrors(register: EventRegister, record: EventRecord): Promise<number> {
  const firstOfRound = record.attempts - record.roundAttempts + 1;
  const attempts = await register.listAttempts(record.sender, record.eventId);
  return attempts.filter((a) => a.attempt >= firstOfRound && a.outcome === "errored").length;
}

/**
 * The attempts claimed ahead before this one and never finished, from the
 * attempt log: read only when the poison rule would stop the event without
 * them, so the common path costs nothing.
 */
async function lostAheadAttempts(deps: AttemptDeps, { record, lease }: Claim): Promise<number> {
  if (unfinishedAttempts(record) < deps.policy.maxUnfinishedAttempts) return 0;
  const attempts = await deps.register.listAttempts(record.sender, record.eventId);
  return attempts.filter((a) => a.kind === "ahead" && a.finishedAt === null && a.leaseToken < lease.token).length;
}

/** Asks 1C whether it holds the event before the gateway may end it undelivered. */
async function askBeforeEnding(
  deps: AttemptDeps,
  record: EventRecord,
  ending: FinalSettlement,
  log: Logger,
  trace?: AttemptTrace,
): Promise<Step> {
  const lookup = await deps.onec.lookUpEvent(
    onecIdempotencyKey(record.sender, record.eventId),
    record.correlationId,
    trace?.context,
  );
  const settlement = settlementAfterLookup(deps.policy, record, ending, lookup, deps.now());
  const said =
    lookup.kind === "found"
      ? `1C holds order ${lookup.order.number}`
      : lookup.kind === "absent"
        ? "1C does not hold the event"
        : `1C could not be asked (${lookup.errorClass})`;
  const detail = `asked 1C before stopping (${ending.errorClass}): ${said}`;
  if (lookup.kind === "unknown") log.warn({ error_class: lookup.errorClass }, `${detail}: ${lookup.message}`);
  else log.info({ onec_lookup: lookup.kind }, detail);
  return {
    settlement,
    report: {
      outcome: `lookup_${lookup.kind}`,
      httpStatus: lookup.httpStatus,
      errorClass: lookup.kind === "unknown" ? lookup.errorClass : undefined,
      detail,
    },
    outcome: `lookup_${lookup.kind}`,
    onecAnswered: lookup.kind !== "unknown",
  };
}

function reportOf(outcome: OnecOutcome): Step["report"] {
  switch (outcome.kind) {
    case "delivered":
      return {
        outcome: "delivered",
        httpStatus: outcome.httpStatus,
        detail: outcome.order.number,
      };
    case "rejected":
    case "errored":
      return {
        outcome: outcome.kind,
        httpStatus: outcome.httpStatus,
        errorClass: outcome.code,
        detail: excerpt(outcome.message),
      };
    case "conflict":
    case "unauthorized":
      return {
        outcome: outcome.kind,
        httpStatus: outcome.httpStatus,
        detail: excerpt(outcome.message),
      };
    case "retryable":
      return {
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
