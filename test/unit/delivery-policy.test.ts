import { describe, expect, it } from "vitest";
import { type DeliveryPolicy, decideClaim, settlementFor } from "../../src/delivery/retry-policy.ts";
import { eventRecord, T0 } from "../support/records.ts";

const policy: DeliveryPolicy = {
  baseMs: 1000,
  maxDelayMs: 600_000,
  maxAttempts: 5,
  maxAgeMs: 3_600_000,
  maxUnfinishedAttempts: 3,
};
const mid = () => 0.5;

describe("decideClaim", () => {
  it("lets a normal event go", () => {
    expect(decideClaim(policy, eventRecord({ attempts: 2, finishedAttempts: 2, roundAttempts: 2 }))).toEqual({
      go: true,
    });
  });

  it("stops an event whose attempts keep dying with the process (poison)", () => {
    const decision = decideClaim(policy, eventRecord({ attempts: 3, finishedAttempts: 0, roundAttempts: 3 }));
    expect(decision.go).toBe(false);
    if (decision.go) return;
    expect(decision.settlement).toMatchObject({ status: "FAILED_FINAL", errorClass: "crash_loop" });
    expect(JSON.parse(decision.settlement.response.body)).toMatchObject({
      status: 502,
      type: "/integration/v1/problems/delivery-abandoned",
    });
  });

  it("stops an event whose budget is spent", () => {
    const decision = decideClaim(policy, eventRecord({ attempts: 5, finishedAttempts: 5, roundAttempts: 5 }));
    expect(decision.go === false && decision.settlement.errorClass).toBe("max_attempts");
  });
});

describe("settlementFor", () => {
  const order = { id: "o", number: "ORD-1" };

  it("maps 1C's answers to the event's next state", () => {
    const record = eventRecord();
    expect(settlementFor(policy, record, { kind: "delivered", httpStatus: 201, order }, T0).status).toBe("SUCCEEDED");
    const rejected = settlementFor(
      policy,
      record,
      { kind: "rejected", httpStatus: 422, code: "UNKNOWN_SKU", message: "m" },
      T0,
    );
    expect(rejected).toMatchObject({ status: "FAILED_FINAL", errorClass: "onec_rejected", response: { status: 422 } });
    const conflict = settlementFor(policy, record, { kind: "conflict", httpStatus: 409, message: "m" }, T0);
    expect(conflict).toMatchObject({ status: "FAILED_FINAL", errorClass: "onec_conflict", response: { status: 422 } });
  });

  it("retries a passing failure with backoff from the round's attempt count", () => {
    const outcome = { kind: "retryable", httpStatus: 503, errorClass: "http_503", message: "busy" } as const;
    const third = settlementFor(policy, eventRecord({ roundAttempts: 3 }), outcome, T0, mid);
    expect(third).toEqual({
      status: "FAILED_RETRYABLE",
      error: "http_503: busy",
      errorClass: "http_503",
      nextAttemptAt: T0 + 4000,
      charged: true,
    });
  });

  it("honours 1C's Retry-After within the cap", () => {
    const outcome = { kind: "retryable", errorClass: "http_503", message: "x", retryAfterMs: 60_000 } as const;
    const next = settlementFor(policy, eventRecord(), outcome, T0, mid);
    expect(next.status === "FAILED_RETRYABLE" && next.nextAttemptAt).toBe(T0 + 60_000);
  });

  it("ends the round after the last attempt or past the maximum age", () => {
    const outcome = { kind: "retryable", errorClass: "timeout", message: "x" } as const;
    expect(settlementFor(policy, eventRecord({ roundAttempts: 5 }), outcome, T0)).toMatchObject({
      status: "FAILED_FINAL",
      errorClass: "max_attempts",
      response: { status: 502 },
    });
    expect(settlementFor(policy, eventRecord({ roundStartedAt: T0 - 3_600_000 }), outcome, T0)).toMatchObject({
      status: "FAILED_FINAL",
      errorClass: "max_age",
    });
  });

  it("keeps retrying bad credentials without charging the event", () => {
    const next = settlementFor(
      policy,
      eventRecord({ roundAttempts: 5 }),
      { kind: "unauthorized", httpStatus: 401, message: "m" },
      T0,
      mid,
    );
    expect(next).toMatchObject({ status: "FAILED_RETRYABLE", errorClass: "onec_unauthorized", charged: false });
  });
});
