import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replayBulk } from "../../src/cli/commands/replay-bulk.ts";
import type { CliContext } from "../../src/cli/context.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { AttemptReport, Settlement } from "../../src/register/port.ts";
import { siteOrderOf } from "../support/records.ts";
import { TestDatabase } from "./cli-support.ts";

/**
 * `gateway replay --status S` chooses its events once, then replays them one by one at --rate, which
 * may take minutes. An event delivered meanwhile must be left alone: with --force it was sent to 1C
 * again, and without it was counted as refused (exit 1) though nothing was wrong. Each replay checks
 * the status in its own transaction (ReplayRequest.expectedStatus). In process, on a real SQLite
 * file: the pause between two replays is where the other process acts.
 */
/** A CLI context whose output lands in `lines` and whose pause between replays runs `pause`. */
function contextFor(db: TestDatabase, lines: string[], pause: () => Promise<void>): CliContext {
  return {
    out: (text) => lines.push(text),
    err: (text) => lines.push(`stderr: ${text}`),
    env: db.env,
    now: () => Date.now(),
    sleep: pause,
  };
}

/** `gateway replay --status FAILED_FINAL --reason "1C fixed" --by ops`, every sender. */
function bulkOptions(force: boolean) {
  return {
    status: EventStatus.FAILED_FINAL,
    sender: undefined,
    since: undefined,
    until: undefined,
    limit: 100,
    rate: 1000,
    dryRun: false,
    reason: "1C fixed",
    requestedBy: "ops",
    force,
  };
}

/** Claims `eventId` of `sender` and writes 1C's outcome for it, as a deliverer elsewhere would. */
async function settleElsewhere(
  db: TestDatabase,
  sender: string,
  eventId: string,
  settlement: Settlement,
  report: AttemptReport,
) {
  const [claim] = await db.register.claim({
    owner: "w",
    now: Date.now(),
    leaseMs: 60_000,
    limit: 1,
    only: { sender, eventId },
  });
  if (claim === undefined) throw new Error(`${sender}/${eventId} was not claimed`);
  await db.register.settle(claim.lease, settlement, report, Date.now());
}

describe("gateway replay --status, with an event that changes while it runs", () => {
  let db: TestDatabase;
  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  it("leaves an event delivered meanwhile as it is, even with --force, and exits 0", async () => {
    const first = await db.failedFinal();
    const second = await db.failedFinal();
    const lines: string[] = [];
    // Between the two replays, support replays the second event elsewhere and 1C takes it.
    const io = contextFor(db, lines, async () => {
      await db.register.replay({
        sender: "default",
        eventId: second,
        requestedBy: "someone-else",
        reason: "fixed",
        force: false,
        now: Date.now(),
      });
      await settleElsewhere(
        db,
        "default",
        second,
        { status: EventStatus.SUCCEEDED, order: { id: "o-2", number: "ORD-2" }, response: { status: 201, body: "{}" } },
        { startedAt: Date.now(), durationMs: 1, outcome: "delivered", httpStatus: 201 },
      );
    });
    const options = bulkOptions(true);
    const exit = await replayBulk(options, db.register, io);
    expect(exit).toBe(0);
    expect(lines[0]).toBe(`${first}: FAILED_FINAL → PROCESSING (replay by ops: 1C fixed)`);
    expect(lines[1]).toMatch(new RegExp(`^${second}: now SUCCEEDED, no longer what it was chosen by`));
    expect(lines[2]).toBe("replayed 1, refused 0, 1 no longer FAILED_FINAL");
    expect((await db.find(second))?.status).toBe(EventStatus.SUCCEEDED);
    expect(db.replays(second).map((replay) => replay.requested_by)).toEqual(["someone-else"]);
  });

  it("replays each event under its own sender when two senders used one event_id, without --sender", async () => {
    const eventId = await db.failedFinal();
    const held = await db.find(eventId);
    if (held === undefined) throw new Error("the first sender's event is missing");
    // The second shop's event under the same id, ended FAILED_FINAL the same way.
    await db.register.reserve({
      sender: "shop-b",
      eventId,
      fingerprint: held.fingerprint,
      policyVersion: held.policyVersion,
      body: held.body,
      ...siteOrderOf(held.body),
      correlationId: "c-shop-b",
      now: Date.now(),
    });
    await settleElsewhere(
      db,
      "shop-b",
      eventId,
      {
        status: EventStatus.FAILED_FINAL,
        error: "refused",
        errorClass: "onec_rejected",
        response: { status: 422, body: "{}" },
      },
      { startedAt: Date.now(), durationMs: 1, outcome: "rejected", httpStatus: 422, errorClass: "onec_rejected" },
    );
    const lines: string[] = [];
    const io = contextFor(db, lines, async () => {});
    const options = bulkOptions(false);
    expect(await replayBulk(options, db.register, io)).toBe(0);
    expect(lines.at(-1)).toBe("replayed 2, refused 0");
    expect((await db.register.find("shop-b", eventId))?.status).toBe(EventStatus.PROCESSING);
    expect((await db.find(eventId))?.status).toBe(EventStatus.PROCESSING);
  });
});
