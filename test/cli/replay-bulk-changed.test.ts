import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replayBulk } from "../../src/cli/commands/replay-bulk.ts";
import type { CliContext } from "../../src/cli/context.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import { TestDatabase } from "./cli-support.ts";

/**
 * `gateway replay --status S` chooses its events once, then replays them one by one at --rate, which
 * may take minutes. An event delivered meanwhile must be left alone: with --force it was sent to 1C
 * again, and without it was counted as refused (exit 1) though nothing was wrong. Each replay checks
 * the status in its own transaction (ReplayRequest.expectedStatus). In process, on a real SQLite
 * file: the pause between two replays is where the other process acts.
 */
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
    const io: CliContext = {
      out: (text) => lines.push(text),
      err: (text) => lines.push(`stderr: ${text}`),
      env: db.env,
      now: () => Date.now(),
      // Between the two replays, support replays the second event elsewhere and 1C takes it.
      sleep: async () => {
        await db.register.replay({
          sender: "default",
          eventId: second,
          requestedBy: "someone-else",
          reason: "fixed",
          force: false,
          now: Date.now(),
        });
        const [claim] = await db.register.claim({
          owner: "w",
          now: Date.now(),
          leaseMs: 60_000,
          limit: 1,
          only: { sender: "default", eventId: second },
        });
        if (claim === undefined) throw new Error("the replayed event was not claimed");
        const order = { id: "o-2", number: "ORD-2" };
        await db.register.settle(
          claim.lease,
          { status: EventStatus.SUCCEEDED, order, response: { status: 201, body: "{}" } },
          { startedAt: Date.now(), durationMs: 1, outcome: "delivered", httpStatus: 201 },
          Date.now(),
        );
      },
    };
    const options = {
      status: EventStatus.FAILED_FINAL,
      sender: undefined,
      since: undefined,
      until: undefined,
      limit: 100,
      rate: 1000,
      dryRun: false,
      reason: "1C fixed",
      requestedBy: "ops",
      force: true,
    };
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
      correlationId: "c-shop-b",
      now: Date.now(),
    });
    const [claim] = await db.register.claim({
      owner: "w",
      now: Date.now(),
      leaseMs: 60_000,
      limit: 1,
      only: { sender: "shop-b", eventId },
    });
    if (claim === undefined) throw new Error("the second sender's event was not claimed");
    await db.register.settle(
      claim.lease,
      {
        status: EventStatus.FAILED_FINAL,
        error: "refused",
        errorClass: "onec_rejected",
        response: { status: 422, body: "{}" },
      },
      { startedAt: Date.now(), durationMs: 1, outcome: "rejected", httpStatus: 422, errorClass: "onec_rejected" },
      Date.now(),
    );
    const lines: string[] = [];
    const io: CliContext = {
      out: (text) => lines.push(text),
      err: (text) => lines.push(`stderr: ${text}`),
      env: db.env,
      now: () => Date.now(),
      sleep: async () => {},
    };
    const options = {
      status: EventStatus.FAILED_FINAL,
      sender: undefined,
      since: undefined,
      until: undefined,
      limit: 100,
      rate: 1000,
      dryRun: false,
      reason: "1C fixed",
      requestedBy: "ops",
      force: false,
    };
    expect(await replayBulk(options, db.register, io)).toBe(0);
    expect(lines.at(-1)).toBe("replayed 2, refused 0");
    expect((await db.register.find("shop-b", eventId))?.status).toBe(EventStatus.PROCESSING);
    expect((await db.find(eventId))?.status).toBe(EventStatus.PROCESSING);
  });
});
