import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { gateway, TestDatabase } from "./cli-support.ts";

describe("gateway status", { timeout: 60_000 }, () => {
  let db: TestDatabase;

  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  it("prints the state and the attempt history of a known event", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["status", eventId], db.env);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^event_id +${eventId}$`, "m"));
    expect(run.stdout).toMatch(/^status +FAILED_FINAL$/m);
    expect(run.stdout).toMatch(/^attempt +started_at +duration +outcome +http_status +error_class +detail$/m);
    expect(run.stdout).toMatch(/^1 +\S+Z +1 ms +rejected +422 +onec_rejected +unknown SKU$/m);
  });

  it("gives the HTTP status view and the attempts as JSON with --json", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["status", eventId, "--json"], db.env);
    expect(run.status).toBe(0);
    const view = JSON.parse(run.stdout);
    expect(view).toMatchObject({ event_id: eventId, status: EventStatus.FAILED_FINAL, attempts: 1 });
    expect(view.attempt_history).toEqual([
      expect.objectContaining({ attempt: 1, outcome: "rejected", http_status: 422, error_class: "onec_rejected" }),
    ]);
  });

  it("exits 1 with a clear message for an unknown event", async () => {
    await db.close();
    const run = gateway(["status", "evt-nobody-sent"], db.env);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim()).toBe('no event with event_id "evt-nobody-sent"');
  });

  it("does not create a database that is not there", () => {
    const run = gateway(["status", "evt-1"], { DATABASE_URL: `${db.file}.typo` });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/no database at .*\.typo/);
  });
});
