import { describe, expect, it } from "vitest";
import { bringsRetriesForward, nextAttemptDelayMs } from "../../src/delivery/retry-policy.ts";

const policy = { baseMs: 1000, maxDelayMs: 600_000 };

describe("nextAttemptDelayMs", () => {
  it("doubles from the base, without jitter at the midpoint", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5].map((n) => nextAttemptDelayMs(policy, n, undefined, mid))).toEqual([
      1000, 2000, 4000, 8000, 16000,
    ]);
  });

  it("keeps jitter within ±20 %", () => {
    expect(nextAttemptDelayMs(policy, 3, undefined, () => 0)).toBe(3200);
    expect(nextAttemptDelayMs(policy, 3, undefined, () => 0.999999)).toBe(4800);
  });

  it("never exceeds the cap, even for a huge attempt count or Retry-After", () => {
    expect(nextAttemptDelayMs(policy, 1000, undefined, () => 0.999999)).toBe(600_000);
    expect(nextAttemptDelayMs(policy, 1, 3_600_000, () => 0.5)).toBe(600_000);
  });

  it("honours a longer Retry-After from 1C", () => {
    expect(nextAttemptDelayMs(policy, 1, 30_000, () => 0.5)).toBe(30_000);
    expect(nextAttemptDelayMs(policy, 5, 1000, () => 0.5)).toBe(16_000);
  });
});

describe("bringsRetriesForward", () => {
  const policy = { maxDelayMs: 600_000 };

  it("brings them forward at the first recovery, and again once the backoff's cap has passed since the last", () => {
    expect(bringsRetriesForward(policy, undefined, 1_000)).toBe(true);
    expect(bringsRetriesForward(policy, 1_000, 1_000 + 600_000)).toBe(true);
  });

  it("leaves them their backoff at a recovery within the cap of the last that did", () => {
    expect(bringsRetriesForward(policy, 1_000, 1_000)).toBe(false);
    expect(bringsRetriesForward(policy, 1_000, 1_000 + 599_999)).toBe(false);
  });
});
