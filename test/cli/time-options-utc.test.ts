import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { reserveRequest } from "../support/records.ts";
import { gateway, TestDatabase } from "./cli-support.ts";

/**
 * Review finding (MEDIUM): `--since` / `--until` without a zone
 * (2026-11-30T10:00) were read in the machine's local time, while a bare date
 * was UTC, the console reads them as UTC and the CLI prints UTC. As the help
 * and docs/operations.md now say, a time without a zone is UTC. The CLI runs
 * here under TZ=Europe/Moscow (UTC+3), where local 10:00 is 07:00Z.
 */

const EARLY = "2026-11-30T09:30:00.000Z";
const LATE = "2026-11-30T10:30:00.000Z";
const MOSCOW = { TZ: "Europe/Moscow" };

describe("--since and --until without a zone", { timeout: 60_000 }, () => {
  let db: TestDatabase;
  const ids = { early: "", late: "" };

  beforeEach(async () => {
    db = new TestDatabase();
    ids.early = await failedFinal("evt-early", Date.parse(EARLY));
    ids.late = await failedFinal("evt-late", Date.parse(LATE));
    await db.close();
  });
  afterEach(async () => {
    await db.remove();
  });

  /** An event received at `at`, refused by 1C at once. */
  async function failedFinal(eventId: string, at: number): Promise<string> {
    await db.register.reserve(reserveRequest({ eventId, correlationId: `c-${eventId}`, now: at }));
    const [claim] = await db.register.claim({
      owner: "test",
      now: at,
      leaseMs: 1000,
      limit: 1,
      only: { sender: "default", eventId },
    });
    if (claim === undefined) throw new Error(`could not claim ${eventId}`);
    await db.register.settle(
      claim.lease,
      {
        status: EventStatus.FAILED_FINAL,
        error: "1C refused",
        errorClass: "onec_rejected",
        response: { status: 422, body: "{}" },
      },
      { startedAt: at, durationMs: 1, outcome: "rejected" },
      at,
    );
    return eventId;
  }

  function listed(args: string[]): string[] {
    const run = gateway(["list", "--status", "FAILED_FINAL", "--json", ...args], { ...db.env, ...MOSCOW });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    return JSON.parse(run.stdout).map((view: { event_id: string }) => view.event_id);
  }

  it("list reads them as UTC, with a T or a space, with or without seconds", () => {
    expect(listed(["--since", "2026-11-30T10:00"])).toEqual([ids.late]);
    expect(listed(["--since", "2026-11-30 10:00:00"])).toEqual([ids.late]);
    expect(listed(["--until", "2026-11-30T10:00"])).toEqual([ids.early]);
    expect(listed(["--until", "2026-11-30T09:30:00.000"])).toEqual([ids.early]);
    expect(listed(["--since", "2026-11-30T09:31", "--until", "2026-11-30T10:30"])).toEqual([ids.late]);
  });

  it("list still honours an explicit zone, and reads a bare date as UTC midnight", () => {
    expect(listed(["--since", "2026-11-30T13:00+03:00"])).toEqual([ids.late]);
    expect(listed(["--since", "2026-11-30T10:00Z"])).toEqual([ids.late]);
    expect(listed(["--until", "2026-11-30"])).toEqual([]);
    expect(listed(["--since", "2026-11-30"])).toEqual([ids.early, ids.late]);
  });

  it("bulk replay reads them as UTC too", () => {
    const run = gateway(
      ["replay", "--status", "FAILED_FINAL", "--since", "2026-11-30T10:00", "--reason", "1C fixed", "--dry-run"],
      { ...db.env, ...MOSCOW },
    );
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(`^${ids.late}: would replay FAILED_FINAL`),
      "dry run: would replay 1, nothing changed",
    ]);
  });

  it("says so in the help", () => {
    for (const command of ["list", "replay"]) {
      const run = gateway([command, "--help"], {});
      expect(run.stdout).toMatch(/without a zone.*UTC/s);
    }
  });
});
