import { describe, expect, it } from "vitest";
import { type DeliveryPolicy, planAttempt, unfinishedAttempts } from "../../src/delivery/retry-policy.ts";
import { eventRecord } from "../support/records.ts";

const policy: DeliveryPolicy = {
  baseMs: 1000,
  maxDelayMs: 600_000,
  maxAttempts: 25,
  maxAgeMs: 3_600_000,
  maxUnfinishedAttempts: 3,
  maxOnecErrors: 3,
};

/**
 * The poison rule with attempts claimed ahead (src/register/port.ts, AttemptKind):
 * an ahead attempt lost with its process may never have reached 1C, so it is
 * not counted; but one only, ever, so a poison event still stops.
 */
describe("planAttempt with lost ahead attempts", () => {
  // Three attempts died before this one (the fourth): the poison rule's limit.
  const threeDied = eventRecord({ attempts: 4, finishedAttempts: 0, roundAttempts: 4 });

  it("does not count a lost ahead attempt: three died, one of them claimed ahead, so the event is sent", () => {
    expect(unfinishedAttempts(threeDied, 1)).toBe(2);
    expect(planAttempt(policy, threeDied, 1)).toEqual({ kind: "deliver" });
  });

  it("forgives one lost ahead attempt at most, whatever the log says: four died, so the event is stopped", () => {
    const fourDied = eventRecord({ attempts: 5, finishedAttempts: 0, roundAttempts: 5 });
    expect(unfinishedAttempts(fourDied, 2)).toBe(3);
    const plan = planAttempt(policy, fourDied, 2);
    expect(plan.kind === "ask" && plan.ending.errorClass).toBe("crash_loop");
  });

  it("counts every death as before when none was claimed ahead", () => {
    expect(unfinishedAttempts(threeDied)).toBe(3);
    const plan = planAttempt(policy, threeDied);
    expect(plan.kind === "ask" && plan.ending.errorClass).toBe("crash_loop");
  });
});
