import { EventStatus } from "../domain/event-status.ts";
import { abandonedSnapshot, type OnecOrder, refusalSnapshot, successSnapshot } from "../domain/first-answer.ts";
import { STOPPING_ERROR_CLASS } from "../onec/classify-response.ts";
import type { OnecEventLookup, OnecOutcome } from "../onec/outcome.ts";
import type { EventRecord, FinalSettlement, Settlement } from "../register/port.ts";

/**
 * The one place that decides retries: what a claimed attempt does, when the
 * next one runs, and when the gateway stops trying. Pure: time and randomness
 * come in as arguments.
 *
 * The gateway's own decision to stop (crash loop, budget, age) is never final
 * on its own: an earlier call may have reached 1C without its answer reaching
 * us. Such an ending is an `ask` verdict, and only 1C's "absent" makes it final.
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
  /** 1C's PROCESSING_ERROR answers in one round before the event is final with 1C's text. */
  maxOnecErrors: number;
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

/**
 * Whether 1C answering again (the breaker closing) makes every waiting retry
 * due at once: not when an earlier recovery did so within the backoff's cap.
 * A 1C that flaps (back for a probe, down again for the retries) would
 * otherwise have each waiting event tried at every recovery, and a small
 * backlog spend its `maxAttempts` in minutes instead of hours; so a flap
 * costs an event at most one attempt per `maxDelayMs` beyond its own
 * schedule. `lastAt`: when this process last brought retries forward.
 */
export function bringsRetriesForward(
  policy: Pick<DeliveryPolicy, "maxDelayMs">,
  lastAt: number | undefined,
  now: number,
): boolean {
  return lastAt === undefined || now - lastAt >= policy.maxDelayMs;
}

/** What a claimed attempt does: send the event, or first ask 1C whether it already holds it. */
export type AttemptPlan = { kind: "deliver" } | { kind: "ask"; ending: FinalSettlement };

/**
 * The attempts before this one that started and never finished: the process
 * died during them (or their lease was lost). `lostAhead` of them were claimed
 * ahead (port.ts, AttemptKind): those may have died waiting for a slot, never
 * calling 1C, and are not counted, but only one of them ever is forgiven. An
 * event with one is never claimed ahead again, so no more can come, whatever
 * the register says.
 */
export function unfinishedAttempts(claimed: EventRecord, lostAhead = 0): number {
  return claimed.attempts - 1 - claimed.finishedAttempts - Math.min(1, Math.max(0, lostAhead));
}

/**
 * Decided on the claimed record, whose counters already include this attempt.
 * A poison event (its calls keep dying with the process) is never sent again;
 * 1C is asked instead, which costs it a lookup and cannot crash us the same way.
 * `lostAhead`: see unfinishedAttempts. A poison event is stopped after at most
 * maxUnfinishedAttempts + 1 deaths, the first of them forgiven if it was claimed ahead.
 */
export function planAttempt(policy: DeliveryPolicy, claimed: EventRecord, lostAhead = 0): AttemptPlan {
  const unfinished = unfinishedAttempts(claimed, lostAhead);
  if (unfinished >= policy.maxUnfinishedAttempts) {
    return {
      kind: "ask",
      ending: abandon(
        claimed,
        "crash_loop",
        `${unfinished} attempts started and never finished (the process stopped during them); stopped so it cannot crash the gateway again`,
      ),
    };
  }
  // Only reachable when RETRY_MAX_ATTEMPTS was lowered below a round already under way.
  if (claimed.roundAttempts > policy.maxAttempts) {
    const made = claimed.roundAttempts - 1;
    return { kind: "ask", ending: abandon(claimed, "max_attempts", `${made} attempts made`) };
  }
  return { kind: "deliver" };
}

/** What to write after an attempt, or the ending that needs 1C's word first. */
export type Verdict = { kind: "settle"; settlement: Settlement } | { kind: "ask"; ending: FinalSettlement };

/**
 * After an attempt: what the event becomes, given what 1C said. `onecErrors` counts 1C's
 * PROCESSING_ERROR answers in this round, this one included (the caller reads the attempt log).
 */
export function verdictFor(
  policy: DeliveryPolicy,
  record: EventRecord,
  answer: OnecOutcome,
  now: number,
  random: () => number = Math.random,
  onecErrors = 0,
): Verdict {
  if (answer.kind === "errored" && onecErrors >= policy.maxOnecErrors) {
    return { kind: "ask", ending: onecFailure(record, answer, onecErrors) };
  }
  // Below the budget, 1C's error is retried like an outage: it may have been a passing fault.
  const outcome: OnecOutcome =
    answer.kind === "errored"
      ? { kind: "retryable", httpStatus: answer.httpStatus, errorClass: ONEC_ERROR_CLASS, message: answer.message }
      : answer;
  if (outcome.kind !== "retryable")
    return { kind: "settle", settlement: answeredSettlement(policy, record, outcome, now, random) };
  const error = `${outcome.errorClass}: ${outcome.message}`;
  // Cut short by this process stopping: no fault of the event or of 1C, so it costs nothing and is due
  // at once, for the instances still running.
  if (outcome.errorClass === STOPPING_ERROR_CLASS) {
    return { kind: "settle", settlement: retryAt(now, error, outcome.errorClass, false) };
  }
  if (record.roundAttempts >= policy.maxAttempts) {
    return {
      kind: "ask",
      ending: abandon(record, "max_attempts", `${record.roundAttempts} attempts made; the last: ${error}`),
    };
  }
  if (now - record.roundStartedAt >= policy.maxAgeMs) {
    const hours = Math.round((now - record.roundStartedAt) / 360_000) / 10;
    return {
      kind: "ask",
      ending: abandon(record, "max_age", `still undelivered after ${hours} h; the last: ${error}`),
    };
  }
  const delayMs = nextAttemptDelayMs(policy, record.roundAttempts, outcome.retryAfterMs, random);
  return { kind: "settle", settlement: retryAt(now + delayMs, error, outcome.errorClass, true) };
}

function retryAt(nextAttemptAt: number, error: string, errorClass: string, charged: boolean): Settlement {
  return { status: EventStatus.FAILED_RETRYABLE, error, errorClass, nextAttemptAt, charged };
}

/** The error class of an attempt 1C answered with PROCESSING_ERROR, in the register and the attempt log. */
export const ONEC_ERROR_CLASS = "onec_error";

/**
 * Every error class an event ends FAILED_FINAL with: 1C refused it, 1C kept failing on it, or the
 * gateway gave up. Each ending below is typed by this list, so a new one is added here first; the
 * metrics show each at 0 from the start.
 */
export const FAILED_FINAL_REASONS = [
  "onec_rejected",
  "onec_conflict",
  ONEC_ERROR_CLASS,
  "max_attempts",
  "max_age",
  "crash_loop",
] as const;

export type FailedFinalReason = (typeof FAILED_FINAL_REASONS)[number];

/**
 * 1C failed on the event `count` times: final, with 1C's text for support, once 1C says it holds
 * no order for the key. The contract's PROCESSING_ERROR means 1C rolled the call back, but an error
 * raised after its commit (writing its event log, building the answer) reaches us the same way.
 */
function onecFailure(
  record: EventRecord,
  answer: Extract<OnecOutcome, { kind: "errored" }>,
  count: number,
): FinalSettlement {
  return abandon(record, ONEC_ERROR_CLASS, `1C failed to process it ${count} times; 1C said: ${answer.message}`);
}

/**
 * An ending the gateway chose, once 1C has been asked: 1C's order if it has
 * one, the ending if it has none, and another try later (not charged) while
 * 1C cannot be asked. Never FAILED_FINAL for an event 1C holds.
 */
export function settlementAfterLookup(
  policy: DeliveryPolicy,
  record: EventRecord,
  ending: FinalSettlement,
  lookup: OnecEventLookup,
  now: number,
  random: () => number = Math.random,
): Settlement {
  switch (lookup.kind) {
    case "found":
      return delivered(record, lookup.order);
    case "absent":
      return ending;
    case "unknown":
      // Cut short by this process stopping: asked again at once, by an instance still running.
      if (lookup.errorClass === STOPPING_ERROR_CLASS) {
        return retryAt(now, `${STOPPING_ERROR_CLASS}: ${lookup.message}`, STOPPING_ERROR_CLASS, false);
      }
      return {
        status: EventStatus.FAILED_RETRYABLE,
        error: `about to stop (${ending.errorClass}), but 1C could not be asked whether it has the event: ${lookup.errorClass}: ${lookup.message}`,
        errorClass: "onec_lookup_failed",
        nextAttemptAt: now + nextAttemptDelayMs(policy, record.roundAttempts, undefined, random),
        charged: false,
      };
  }
}

function delivered(record: EventRecord, order: OnecOrder): Settlement {
  return { status: EventStatus.SUCCEEDED, order, response: successSnapshot(record.eventId, order) };
}

/** 1C answered: what its answer makes of the event. */
function answeredSettlement(
  policy: DeliveryPolicy,
  record: EventRecord,
  outcome: Exclude<OnecOutcome, { kind: "retryable" | "errored" }>,
  now: number,
  random: () => number,
): Settlement {
  switch (outcome.kind) {
    case "delivered":
      return delivered(record, outcome.order);
    case "rejected":
      return {
        status: EventStatus.FAILED_FINAL,
        error: `1C rejected the order: ${outcome.code}: ${outcome.message}`,
        errorClass: "onec_rejected" satisfies FailedFinalReason,
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
        errorClass: "onec_conflict" satisfies FailedFinalReason,
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
  }
}

function abandon(record: EventRecord, errorClass: FailedFinalReason, why: string): FinalSettlement {
  return {
    status: EventStatus.FAILED_FINAL,
    error: `delivery abandoned (${errorClass}): ${why}`,
    errorClass,
    response: abandonedSnapshot(record.eventId, errorClass, why, record.correlationId),
  };
}
