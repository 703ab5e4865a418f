import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { gateway, TestDatabase } from "./cli-support.ts";

describe("gateway replay <event_id>", { timeout: 60_000 }, () => {
  let db: TestDatabase;

  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  it("puts a FAILED_FINAL event back to PROCESSING and writes the audit row", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["replay", eventId, "--reason", "SKU added in 1C", "--by", "alice"], db.env);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(`${eventId}: FAILED_FINAL → PROCESSING (replay by alice: SKU added in 1C)`);
    expect((await db.find(eventId))?.status).toBe(EventStatus.PROCESSING);
    expect(db.replays(eventId)).toEqual([
      { requested_by: "alice", reason: "SKU added in 1C", forced: 0, from_status: EventStatus.FAILED_FINAL },
    ]);
  });

  it("names the operator user@host when --by is not given", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["replay", eventId, "--reason", "retry"], db.env);
    expect(run.status).toBe(0);
    expect(db.replays(eventId)[0]?.requested_by).toMatch(/^.+@.+$/);
  });

  it("refuses a SUCCEEDED event without --force (exit 1) and replays it with --force", async () => {
    const eventId = await db.succeeded();
    await db.close();
    const refused = gateway(["replay", eventId, "--reason", "again"], db.env);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(new RegExp(`^${eventId}: refused: already SUCCEEDED .*--force`));
    expect(db.replays(eventId)).toEqual([]);

    const forced = gateway(["replay", eventId, "--reason", "again", "--force", "--by", "bob"], db.env);
    expect(forced.status).toBe(0);
    expect(forced.stdout.trim()).toBe(`${eventId}: SUCCEEDED → PROCESSING (forced replay by bob: again)`);
    expect(db.replays(eventId)).toEqual([
      { requested_by: "bob", reason: "again", forced: 1, from_status: EventStatus.SUCCEEDED },
    ]);
  });

  it("exits 1 for an unknown event", async () => {
    await db.close();
    const run = gateway(["replay", "evt-nobody-sent", "--reason", "x"], db.env);
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe("evt-nobody-sent: no event with this event_id");
  });

  it("exits 2 with the usage when --reason is missing, and changes nothing", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["replay", eventId], db.env);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/--reason "…" is required/);
    expect(run.stderr).toMatch(/Usage: gateway replay <event_id> --reason/);
    expect(db.replays(eventId)).toEqual([]);
  });
});
