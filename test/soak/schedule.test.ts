import { describe, expect, it } from "vitest";
import { Prng } from "./prng.ts";
import { type FaultMix, faultSchedule } from "./schedule.ts";

const QUICK: FaultMix = { onecWindows: ["outage", "latency", "kill", "crash_loop"], gatewayKills: 3, bursts: [200] };

describe("the soak's fault schedule", () => {
  it("is the same for the same seed and differs for another", () => {
    const labels = (seed: number) => faultSchedule(new Prng(seed), 38_000, QUICK).map((f) => `${f.atMs} ${f.label}`);
    expect(labels(42)).toEqual(labels(42));
    expect(labels(42)).not.toEqual(labels(43));
  });

  it("plans every fault inside the window and never overlaps two 1C windows", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const faults = faultSchedule(new Prng(seed), 38_000, QUICK);
      expect(faults.every((f) => f.atMs >= 0 && f.atMs <= 38_000)).toBe(true);
      // 1C actions alternate: a window opens, then clears, before the next opens.
      let open = false;
      for (const { action } of faults) {
        if (action.kind === "kill_gateway" || action.kind === "burst") continue;
        const clears = action.kind === "onec_faults" && action.patch.unavailable === false;
        if (clears) {
          expect(open).toBe(true);
          open = false;
        } else {
          expect(open).toBe(false);
          open = action.kind !== "kill_onec";
        }
      }
      expect(open).toBe(false);
      expect(faults.filter((f) => f.action.kind === "kill_gateway").length).toBeGreaterThanOrEqual(3);
    }
  });
});
