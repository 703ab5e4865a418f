import { describe, expect, it } from "vitest";
import { KnownBodies } from "../../src/accept/known-bodies.ts";

describe("KnownBodies", () => {
  it("never holds more than its capacity, and always recalls the most recent half of it", () => {
    for (const capacity of [1, 2, 3, 10, 11]) {
      const known = new KnownBodies<number>(capacity);
      for (let i = 0; i < capacity * 7 + 3; i++) {
        known.remember(`body-${i}`, i);
        expect(known.size).toBeLessThanOrEqual(capacity);
        for (let back = 0; back < Math.ceil(capacity / 2) && back <= i; back++) {
          expect(known.recall(`body-${i - back}`)).toBe(i - back);
        }
      }
    }
  });

  it("drops the oldest first", () => {
    const known = new KnownBodies<number>(4);
    for (let i = 0; i < 6; i++) known.remember(`body-${i}`, i);
    const kept = Array.from({ length: 6 }, (_, i) => known.recall(`body-${i}`) !== undefined);
    // Whatever it keeps is a run of the newest: nothing older survives anything newer.
    expect(kept.indexOf(true)).toBeGreaterThan(0);
    expect(kept.slice(kept.indexOf(true)).every(Boolean)).toBe(true);
  });

  it("holds nothing with a capacity of 0", () => {
    const known = new KnownBodies<number>(0);
    known.remember("body", 1);
    expect(known.recall("body")).toBeUndefined();
    expect(known.size).toBe(0);
  });
});
