import { describe, expect, it } from "vitest";
import {
  type DeliveryPolicy,
  planAttempt,
  settlementAfterLookup,
  type Verdict,
  verdictFor,
} from "../../src/delivery/retry-policy.ts";
import { classifyError, GatewayStoppingError } from "../../src/onec/classify-response.ts";
import type { Settlement } from "../../src/register/port.ts";
import { eventRecord, T0 } from "../support/records.ts";

const policy: DeliveryPolicy = {
  baseMs: 1000,
  maxDelayMs: 600_000,
  maxAttempts: 5,
  maxAgeMs: 3_600_000,
  maxUnfinishedAttempts: 3,
  maxOnecErrors: 3,
};
const mid = () => 0.5;

describe("planAttempt (on the claimed record, this attempt counted)", () => {
  it("sends a normal event", () => {
    expect(planAttempt(policy, eventRecord({ attempts: 3, finishedAttempts: 2, roundAttempts: 3 }))).toEqual({
      kind: "deliver",
    });
  });

  it("asks 1C instead of sending again an event whose attempts keep dying with the process (poison)", () => {
    const plan = planAttempt(policy, eventRecord({ attempts: 4, finishedAttempts: 0, roundAttempts: 4 }));
    expect(plan.kind).toBe("ask");
    if (plan.kind !== "ask") return;
    expect(plan.ending).toMatchObject({ status: "FAILED_FINAL", errorClass: "crash_loop" });
    expect(JSON.parse(plan.ending.response.body)).toMatchObject({
      status: 502,
      type: "/integration/v1/problems/delivery-abandoned",
    });
  });

  it("asks 1C before ending an event whose budget was lowered below its round", () => {
    const plan = planAttempt(policy, eventRecord({ attempts: 6, finishedAttempts: 5, roundAttempts: 6 }));
    expect(plan.kind === "ask" && plan.ending.errorClass).toBe("max_attempts");
  });
});

describe("settlementAfterLookup: the gateway's own ending waits for 1C's word", () => {
  const ending = {
    status: "FAILED_FINAL",
    error: "delivery abandoned (crash_loop)",
    errorClass: "crash_loop",
    response: { status: 502, body: "{}" },
  } as const;
  const record = eventRecord({ eventId: "evt-1", roundAttempts: 3 });

  it("takes 1C's order when 1C holds the event", () => {
    const order = { id: "o-9", number: "ORD-9" };
    const settlement = settlementAfterLookup(policy, record, ending, { kind: "found", httpStatus: 200, order }, T0);
    expect(settlement).toMatchObject({ status: "SUCCEEDED", order, response: { status: 201 } });
    if (settlement.status !== "SUCCEEDED") return;
    expect(JSON.parse(settlement.response.body)).toMatchObject({ event_id: "evt-1", order });
  });

  it("ends the event only when 1C says it never committed it", () => {
    expect(settlementAfterLookup(policy, record, ending, { kind: "absent", httpStatus: 404 }, T0)).toBe(ending);
  });

  it("keeps the event pending, uncharged, while 1C cannot be asked", () => {
    const lookup = { kind: "unknown", errorClass: "ECONNREFUSED", message: "down" } as const;
    const settlement = settlementAfterLookup(policy, record, ending, lookup, T0, mid);
    expect(settlement).toMatchObject({
      status: "FAILED_RETRYABLE",
      errorClass: "onec_lookup_failed",
      nextAttemptAt: T0 + 4000,
      charged: false,
    });
  });
});

describe("verdictFor", () => {
  const order = { id: "o", number: "ORD-1" };

  it("maps 1C's answers to the event's next state", () => {
    const record = eventRecord();
    expect(settle(verdictFor(policy, record, { kind: "delivered", httpStatus: 201, order }, T0)).status).toBe(
      "SUCCEEDED",
    );
    const rejected = verdictFor(
      policy,
      record,
      { kind: "rejected", httpStatus: 422, code: "UNKNOWN_SKU", message: "m" },
      T0,
    );
    expect(settle(rejected)).toMatchObject({
      status: "FAILED_FINAL",
      errorClass: "onec_rejected",
      response: { status: 422 },
    });
    const conflict = verdictFor(policy, record, { kind: "conflict", httpStatus: 409, message: "m" }, T0);
    expect(settle(conflict)).toMatchObject({
      status: "FAILED_FINAL",
      errorClass: "onec_conflict",
      response: { status: 422 },
    });
  });

  it("retries a passing failure with backoff from the round's attempt count", () => {
    const outcome = { kind: "retryable", httpStatus: 503, errorClass: "http_503", message: "busy" } as const;
    const third = verdictFor(policy, eventRecord({ roundAttempts: 3 }), outcome, T0, mid);
    expect(settle(third)).toEqual({
      status: "FAILED_RETRYABLE",
      error: "http_503: busy",
      errorClass: "http_503",
      nextAttemptAt: T0 + 4000,
      charged: true,
    });
  });

  it("honours 1C's Retry-After within the cap", () => {
    const outcome = { kind: "retryable", errorClass: "http_503", message: "x", retryAfterMs: 60_000 } as const;
    const next = settle(verdictFor(policy, eventRecord(), outcome, T0, mid));
    expect(next.status === "FAILED_RETRYABLE" && next.nextAttemptAt).toBe(T0 + 60_000);
  });

  it("after the last attempt or past the maximum age, asks 1C before ending the round", () => {
    const outcome = { kind: "retryable", errorClass: "timeout", message: "x" } as const;
    expect(verdictFor(policy, eventRecord({ roundAttempts: 5 }), outcome, T0)).toMatchObject({
      kind: "ask",
      ending: { status: "FAILED_FINAL", errorClass: "max_attempts", response: { status: 502 } },
    });
    expect(verdictFor(policy, eventRecord({ roundStartedAt: T0 - 3_600_000 }), outcome, T0)).toMatchObject({
      kind: "ask",
      ending: { status: "FAILED_FINAL", errorClass: "max_age" },
    });
  });

  it("keeps retrying bad credentials without charging the event", () => {
    const next = verdictFor(
      policy,
      eventRecord({ roundAttempts: 5 }),
      { kind: "unauthorized", httpStatus: 401, message: "m" },
      T0,
      mid,
    );
    expect(settle(next)).toMatchObject({ status: "FAILED_RETRYABLE", errorClass: "onec_unauthorized", charged: false });
  });
});

describe("verdictFor: a call cut short because this process stops", () => {
  const stopping = classifyError(new GatewayStoppingError());

  it("is classified as its own retryable class, not as 1C's timeout", () => {
    expect(stopping).toMatchObject({ kind: "retryable", errorClass: "gateway_stopping" });
  });

  it("costs the round nothing and is due at once, even on the round's last attempt: no ending, no lookup", () => {
    const lastOfRound = eventRecord({ roundAttempts: policy.maxAttempts });
    expect(verdictFor(policy, lastOfRound, stopping, T0, mid)).toEqual({
      kind: "settle",
      settlement: {
        status: "FAILED_RETRYABLE",
        error: `gateway_stopping: ${stopping.message}`,
        errorClass: "gateway_stopping",
        nextAttemptAt: T0,
        charged: false,
      },
    });
  });
});

describe("settlementAfterLookup: a lookup cut short because this process stops", () => {
  it("is due at once and not charged, like a POST cut short, not retried after a backoff", () => {
    const ending = verdictFor(
      policy,
      eventRecord({ roundAttempts: policy.maxAttempts }),
      classifyError(new Error("x")),
      T0,
      mid,
    );
    if (ending.kind !== "ask") throw new Error("expected the round's end to ask 1C first");
    const cut = {
      kind: "unknown",
      errorClass: "gateway_stopping",
      message: "the gateway stopped during the call",
    } as const;
    expect(settlementAfterLookup(policy, eventRecord(), ending.ending, cut, T0, mid)).toMatchObject({
      status: "FAILED_RETRYABLE",
      errorClass: "gateway_stopping",
      nextAttemptAt: T0,
      charged: false,
    });
  });
});

describe("verdictFor: 1C failing on an error it cannot classify (PROCESSING_ERROR)", () => {
  const failed = {
    kind: "errored",
    httpStatus: 500,
    code: "PROCESSING_ERROR",
    message: "Поле объекта не обнаружено (ВидЦены)",
  } as const;

  it("retries it with backoff, charged, while the round has had fewer than the budget (issue 20: a bounded budget)", () => {
    const verdict = verdictFor(policy, eventRecord({ roundAttempts: 2 }), failed, T0, mid, 2);
    expect(settle(verdict)).toEqual({
      status: "FAILED_RETRYABLE",
      error: "onec_error: Поле объекта не обнаружено (ВидЦены)",
      errorClass: "onec_error",
      nextAttemptAt: T0 + 2000,
      charged: true,
    });
  });

  it("ends the event at the budget's last one, FAILED_FINAL with 1C's text, once 1C says it holds no order for it", () => {
    const verdict = verdictFor(policy, eventRecord({ roundAttempts: 4 }), failed, T0, mid, policy.maxOnecErrors);
    // An error raised after 1C's commit (its event log, its answer) comes as PROCESSING_ERROR too.
    if (verdict.kind !== "ask") throw new Error(`expected 1C to be asked first, got ${verdict.kind}`);
    const ending = verdict.ending;
    expect(ending).toMatchObject({ status: "FAILED_FINAL", errorClass: "onec_error", response: { status: 502 } });
    expect(ending.status === "FAILED_FINAL" ? ending.error : "").toContain("Поле объекта не обнаружено (ВидЦены)");
    const body = JSON.parse(ending.status === "FAILED_FINAL" ? ending.response.body : "{}") as { detail: string };
    expect(body.detail).toContain("Поле объекта не обнаружено (ВидЦены)");
  });

  it("counts only 1C's errors against that budget: outages before them do not end the event early", () => {
    // Four attempts in the round, the first three outages: the one error so far is under the budget of 3.
    const verdict = verdictFor(policy, eventRecord({ roundAttempts: 4 }), failed, T0, mid, 1);
    expect(settle(verdict).status).toBe("FAILED_RETRYABLE");
  });

  it("still ends at the round's attempt limit, asking 1C first, like any retry", () => {
    const verdict = verdictFor(policy, eventRecord({ roundAttempts: policy.maxAttempts }), failed, T0, mid, 1);
    expect(verdict.kind).toBe("ask");
  });
});

function settle(verdict: Verdict): Settlement {
  if (verdict.kind !== "settle") throw new Error(`expected a settlement, got ${verdict.kind}`);
  return verdict.settlement;
}
