import { describe, expect, it } from "vitest";
import { nextAttemptDelayMs } from "../../src/delivery/retry-policy.ts";

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
