import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gateway, TestDatabase } from "./cli-support.ts";

describe("gateway list", { timeout: 60_000 }, () => {
  let db: TestDatabase;

  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  it("prints one line per event in the status, oldest first", async () => {
    const first = await db.failedFinal();
    const second = await db.failedFinal();
    await db.succeeded();
    await db.close();
    const run = gateway(["list", "--status", "FAILED_FINAL"], db.env);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^sender +event_id +status +attempts +updated_at +last_error$/);
    expect(lines.slice(1).map((line) => line.split(/ +/).slice(0, 2))).toEqual([
      ["default", first],
      ["default", second],
    ]);
    expect(lines[1]).toMatch(/ FAILED_FINAL +1 +\S+Z +1C refused: unknown SKU$/);
  });

  it("honours --limit, --until and --json", async () => {
    const first = await db.failedFinal();
    await db.failedFinal();
    await db.close();
    const limited = gateway(["list", "--status", "FAILED_FINAL", "--limit", "1", "--json"], db.env);
    expect(limited.status).toBe(0);
    expect(JSON.parse(limited.stdout).map((view: { event_id: string }) => view.event_id)).toEqual([first]);
    expect(limited.stderr).toMatch(/showing the first 1/);
    const none = gateway(["list", "--status", "FAILED_FINAL", "--until", "2000-01-01T00:00:00Z"], db.env);
    expect(none.stdout.trim()).toBe("no FAILED_FINAL events");
  });

  it("refuses an unknown status with the known ones, exit 2", async () => {
    await db.close();
    const run = gateway(["list", "--status", "LOST"], db.env);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--status must be one of PROCESSING, SUCCEEDED, FAILED_RETRYABLE, FAILED_FINAL/);
    expect(run.stderr).toMatch(/Usage: gateway list/);
  });
});
