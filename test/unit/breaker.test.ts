import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../src/delivery/breaker.ts";

function breaker() {
  let now = 0;
  const b = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 1000, maxCooldownMs: 3000 }, () => now);
  return { b, advance: (ms: number) => (now += ms) };
}

describe("CircuitBreaker", () => {
  it("stays closed until N consecutive failures; a success resets the count", () => {
    const { b } = breaker();
    b.onFailure();
    b.onFailure();
    b.onSuccess();
    b.onFailure();
    b.onFailure();
    expect([b.state, b.permits()]).toEqual(["closed", Number.POSITIVE_INFINITY]);
    b.onFailure();
    expect([b.state, b.permits()]).toEqual(["open", 0]);
  });

  it("lets one probe through after the cooldown, and closes when it succeeds", () => {
    const { b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    advance(999);
    expect(b.permits()).toBe(0);
    advance(1);
    expect([b.state, b.permits()]).toEqual(["half_open", 1]);
    b.onStart();
    expect(b.permits()).toBe(0);
    // The success that ends an outage says so: the deliverer then makes held-back retries due.
    expect(b.onSuccess()).toBe(true);
    expect([b.state, b.permits()]).toEqual(["closed", Number.POSITIVE_INFINITY]);
    expect(b.onSuccess()).toBe(false);
  });

  it("lets the next probe through when one ends without an answer either way (its attempt failed on the register)", () => {
    const { b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    advance(1000);
    b.onStart();
    expect(b.permits()).toBe(0);
    b.onAbandoned();
    expect([b.state, b.permits()]).toEqual(["half_open", 1]);
  });

  it("reopens with a doubled cooldown, capped, when the probe fails", () => {
    const { b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    const cooldowns: number[] = [];
    for (let round = 0; round < 3; round++) {
      advance(10_000);
      b.onStart();
      b.onFailure();
      const openUntil = b.openUntil ?? 0;
      let waited = 0;
      while (b.state === "open") {
        advance(100);
        waited += 100;
      }
      cooldowns.push(waited);
      expect(openUntil).toBeGreaterThan(0);
    }
    expect(cooldowns).toEqual([2000, 3000, 3000]);
  });
});
