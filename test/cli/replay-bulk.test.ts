import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gateway, TestDatabase } from "./cli-support.ts";

describe("gateway replay --status", { timeout: 60_000 }, () => {
  let db: TestDatabase;

  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  it("--dry-run prints what it would replay and changes nothing", async () => {
    const failed = [await db.failedFinal(), await db.failedFinal()];
    await db.close();
    const run = gateway(["replay", "--status", "FAILED_FINAL", "--reason", "1C fixed", "--dry-run"], db.env);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines.slice(0, 2)).toEqual(failed.map((id) => expect.stringMatching(`^${id}: would replay FAILED_FINAL`)));
    expect(lines[2]).toBe("dry run: would replay 2, nothing changed");
    for (const id of failed) expect(db.replays(id)).toEqual([]);
  });

  it("replays every matching event, one line each and a summary", async () => {
    const failed = [await db.failedFinal(), await db.failedFinal(), await db.failedFinal()];
    const succeeded = await db.succeeded();
    await db.close();
    const run = gateway(
      ["replay", "--status", "FAILED_FINAL", "--reason", "1C fixed", "--by", "ops", "--rate", "1000"],
      db.env,
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([
      ...failed.map((id) => `${id}: FAILED_FINAL → PROCESSING (replay by ops: 1C fixed)`),
      "replayed 3, refused 0",
    ]);
    for (const id of failed) expect(db.replays(id)).toHaveLength(1);
    expect(db.replays(succeeded)).toEqual([]);
    const again = gateway(["list", "--status", "FAILED_FINAL"], db.env);
    expect(again.stdout.trim()).toBe("no FAILED_FINAL events");
  });

  it("throttles to --rate per second", async () => {
    await db.failedFinal();
    await db.failedFinal();
    await db.failedFinal();
    await db.close();
    const started = performance.now();
    const run = gateway(["replay", "--status", "FAILED_FINAL", "--reason", "slowly", "--rate", "5"], db.env);
    expect(run.status).toBe(0);
    // Two pauses of 200 ms between three replays.
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
  });
});
