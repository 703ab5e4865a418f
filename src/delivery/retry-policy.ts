import { abandonedSnapshot, refusalSnapshot, successSnapshot } from "../http/answers.ts";
import type { OnecOutcome } from "../onec/outcome.ts";
import { EventStatus } from "../register/event-status.ts";
import type { ClaimDecision, EventRecord, FinalSettlement, Settlement } from "../register/port.ts";

/**
 * The one place that decides retries: whether an attempt may start, when the
 * next one runs, and when the gateway stops trying. Pure: time and randomness
 * come in as arguments.
 */
export interface DeliveryPolicy {
  /** First retry delay; doubles per attempt. */
  baseMs: number;
  /** Cap on one delay, also on 1C's Retry-After. */
  maxDelayMs: number;
  /** Attempts per round (a replay starts a new round). */
  maxAttempts: number;
  /** A round older than this ends at its next failure. */
  maxAgeMs: number;
  /** Attempts that started but never wrote an outcome (the process died on them) before the event is stopped. */
  maxUnfinishedAttempts: number;
}

/** delay = min(cap, base × 2^(attempt-1)) × uniform(0.8, 1.2), at least 1C's Retry-After, never past the cap. */
export function nextAttemptDelayMs(
  policy: Pick<DeliveryPolicy, "baseMs" | "maxDelayMs">,
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attemptsMade - 1);
  const raw = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(exponent, 52));
  const jittered = Math.round(raw * (0.8 + 0.4 * random()));
  const wanted = retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
  return Math.min(policy.maxDelayMs, wanted);
}

/** Before an attempt starts: stop a poison event instead of crashing on it again. */
export function decideClaim(policy: DeliveryPolicy, record: EventRecord): ClaimDecision {
  const unfinished = record.attempts - record.finishedAttempts;
  if (unfinished >= policy.maxUnfinishedAttempts) {
    return {
      go: false,
      settlement: abandon(
        record,
        "crash_loop",
        `${unfinished} attempts started and never finished (the process stopped during them); stopped so it cannot crash the gateway again`,
      ),
    };
  }
  if (record.roundAttempts >= policy.maxAttempts) {
    return { go: false, settlement: abandon(record, "max_attempts", `${record.roundAttempts} attempts made`) };
  }
  return { go: true };
}

/** After an attempt: what the event becomes, given what 1C said. */
export function settlementFor(
  policy: DeliveryPolicy,
  record: EventRecord,
  outcome: OnecOutcome,
  now: number,
  random: () => number = Math.random,
): Settlement {
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
        errorClass: "onec_rejected",
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
        errorClass: "onec_conflict",
        response: refusalSnapshot(
          record.eventId,
          "GW_ERR_ONEC_CONFLICT",
          "1C already holds this event id with another body; send a new event_id",
          { code: "EVENT_ID_REUSED", message: outcome.message },
          record.correlationId,
        ),
      };
    case "unauthorized":
      // A configuration fault, not the event's: keep retrying, never spend the event on it.
      return {
        status: EventStatus.FAILED_RETRYABLE,
        error: `configuration: ${outcome.message}`,
        errorClass: "onec_unauthorized",
        nextAttemptAt: now + nextAttemptDelayMs(policy, record.roundAttempts, undefined, random),
        charged: false,
      };
    case "retryable": {
      const error = `${outcome.errorClass}: ${outcome.message}`;
      if (record.roundAttempts >= policy.maxAttempts) {
        return abandon(record, "max_attempts", `${record.roundAttempts} attempts made; the last: ${error}`);
      }
      if (now - record.roundStartedAt >= policy.maxAgeMs) {
        const hours = Math.round((now - record.roundStartedAt) / 360_000) / 10;
        return abandon(record, "max_age", `still undelivered after ${hours} h; the last: ${error}`);
      }
      return {
        status: EventStatus.FAILED_RETRYABLE,
        error,
        errorClass: outcome.errorClass,
        nextAttemptAt: now + nextAttemptDelayMs(policy, record.roundAttempts, outcome.retryAfterMs, random),
        charged: true,
      };
    }
  }
}

function abandon(record: EventRecord, errorClass: string, why: string): FinalSettlement {
  return {
    status: EventStatus.FAILED_FINAL,
    error: `delivery abandoned (${errorClass}): ${why}`,
    errorClass,
    response: abandonedSnapshot(record.eventId, errorClass, why, record.correlationId),
  };
}
