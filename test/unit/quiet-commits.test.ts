import { describe, expect, it } from "vitest";
import { QUIET_COMMIT_LIMITS, QuietCommits } from "../../src/register/sqlite/quiet-commits.ts";

/**
 * Which batches commit on the event loop and which on the writer thread
 * (src/register/sqlite/quiet-commits.ts), on a clock the test moves. The
 * limits are the ones the module documents: batches of at most 4, half of a
 * 100 ms window, a running mean over 5 ms pausing for 1 s, 32 in a row.
 */

function policy(limits = QUIET_COMMIT_LIMITS) {
  let now = 1_000;
  const quiet = new QuietCommits(limits, () => now);
  return {
    quiet,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("QuietCommits", () => {
  it("commits a lone request's small batch here while the writer thread has nothing out", () => {
    const { quiet } = policy();
    expect([1, 2, 4].map((jobs) => quiet.allows(jobs, false))).toEqual([true, true, true]);
  });

  it("sends a batch to the writer thread while one is out there, so that writes stay in order", () => {
    const { quiet } = policy();
    expect(quiet.allows(1, true)).toBe(false);
  });

  it("sends a batch larger than 4 to the writer thread: under load batches grow and leave the event loop", () => {
    const { quiet } = policy();
    expect(quiet.allows(5, false)).toBe(false);
    expect(quiet.allows(50, false)).toBe(false);
  });

  it("gives commits at most half of each 100 ms window of the event loop", () => {
    // No batch goes to the thread for its checkpoint here: only the share decides.
    const { quiet, advance } = policy({ ...QUIET_COMMIT_LIMITS, maxInARow: 1000 });
    let here = 0;
    // Commits of 1 ms back to back: 50 fit in the window, then the thread takes the rest of it.
    for (let i = 0; i < 80; i++) {
      if (quiet.allows(1, false)) {
        here++;
        quiet.took(1);
      }
      advance(1);
    }
    expect(here).toBe(50);
    advance(100);
    expect(quiet.allows(1, false)).toBe(true);
  });

  it("sends one batch in every 33 to the writer thread, whose connection checkpoints the WAL", () => {
    const { quiet, advance } = policy();
    const where: boolean[] = [];
    for (let i = 0; i < 66; i++) {
      const here = quiet.allows(1, false);
      where.push(here);
      if (here) quiet.took(0.3);
      advance(10);
    }
    expect(where.filter((here) => !here)).toHaveLength(2);
    expect(where[32]).toBe(false);
    expect(where[65]).toBe(false);
  });

  it("lets one slow fsync among fast ones pass as the disk's noise", () => {
    const { quiet, advance } = policy();
    for (const ms of [0.3, 0.3, 12, 0.3, 0.3]) {
      expect(quiet.allows(1, false)).toBe(true);
      quiet.took(ms);
      advance(10);
    }
    expect(quiet.allows(1, false)).toBe(true);
  });

  it("sends everything to the writer thread for a second once commits here stay slow, then tries again", () => {
    const { quiet, advance } = policy();
    let slow = 0;
    while (quiet.allows(1, false)) {
      quiet.took(20);
      slow++;
      advance(200);
    }
    // 20 ms each, weighted a fifth: the mean passes 5 ms at the second.
    expect(slow).toBe(2);
    // Paused at the second commit's end, 200 ms ago.
    advance(799);
    expect(quiet.allows(1, false)).toBe(false);
    advance(1);
    expect(quiet.allows(1, false)).toBe(true);
    // The disk is fast again: one fast commit is enough to stay here.
    quiet.took(0.3);
    advance(10);
    expect(quiet.allows(1, false)).toBe(true);
  });
});
