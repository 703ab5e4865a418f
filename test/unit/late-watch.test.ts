import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LateWatch } from "../../src/accept/late-watch.ts";

describe("LateWatch: one timer for every reservation made without a read first", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const watch = () => new LateWatch(100, () => Date.now());

  it("never calls late for an operation that ends in time, and says it ended first", () => {
    const late = vi.fn();
    const ended = watch().watch(late);
    vi.advanceTimersByTime(99);
    expect(ended()).toBe(true);
    vi.advanceTimersByTime(500);
    expect(late).not.toHaveBeenCalled();
  });

  it("calls late once for one still pending after 100 ms, and then says late came first", () => {
    const late = vi.fn();
    const ended = watch().watch(late);
    vi.advanceTimersByTime(99);
    expect(late).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(late).toHaveBeenCalledTimes(1);
    expect(ended()).toBe(false);
    vi.advanceTimersByTime(500);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it("calls each at its own 100 ms, in the order they started, with never more than one timer", () => {
    const lateWatch = watch();
    const calls: string[] = [];
    lateWatch.watch(() => calls.push(`a at ${Date.now()}`));
    vi.advanceTimersByTime(30);
    const bEnded = lateWatch.watch(() => calls.push(`b at ${Date.now()}`));
    vi.advanceTimersByTime(30);
    lateWatch.watch(() => calls.push(`c at ${Date.now()}`));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(40);
    expect(calls).toEqual(["a at 100"]);
    bEnded();
    vi.advanceTimersByTime(100);
    expect(calls).toEqual(["a at 100", "c at 160"]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
