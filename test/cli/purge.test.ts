import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { siteOrderOf } from "../support/records.ts";
import { gateway, TestDatabase } from "./cli-support.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("gateway purge", { timeout: 60_000 }, () => {
  let db: TestDatabase;

  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  /** An event received and finished `age` ms ago (the CLI's clock is the real one). */
  async function finished(eventId: string, status: "SUCCEEDED" | "FAILED_FINAL", age: number): Promise<string> {
    const at = Date.now() - age;
    await reserve(eventId, at);
    const batch = await db.register.claim({
      owner: "test",
      now: at,
      leaseMs: 1000,
      limit: 1,
      only: { sender: "default", eventId },
    });
    const lease = batch[0]?.lease;
    if (lease === undefined) throw new Error(`could not claim ${eventId}`);
    await db.register.settle(
      lease,
      status === EventStatus.SUCCEEDED
        ? { status, order: { id: "o-1", number: "ORD-1" }, response: { status: 201, body: "{}" } }
        : { status, error: "1C refused", errorClass: "onec_rejected", response: { status: 422, body: "{}" } },
      { startedAt: at, durationMs: 1, outcome: "x" },
      at,
    );
    return eventId;
  }

  async function reserve(eventId: string, at: number): Promise<void> {
    await db.register.reserve({
      sender: "default",
      eventId,
      fingerprint: `fp-${eventId}`,
      policyVersion: "test",
      body: "{}",
      ...siteOrderOf("{}"),
      correlationId: `c-${eventId}`,
      now: at,
    });
  }

  async function survivors(ids: readonly string[]): Promise<string[]> {
    const found = await Promise.all(ids.map((id) => db.find(id)));
    return found.flatMap((record) => (record === undefined ? [] : [record.eventId]));
  }

  async function fill(): Promise<string[]> {
    const ids = [
      await finished("old-succeeded", "SUCCEEDED", 40 * DAY),
      await finished("old-final", "FAILED_FINAL", 40 * DAY),
      await finished("three-days", "SUCCEEDED", 3 * DAY),
      await finished("young", "SUCCEEDED", HOUR),
    ];
    await reserve("old-pending", Date.now() - 40 * DAY);
    ids.push("old-pending");
    for (const [key, age] of [
      ["woocommerce:1", 40 * DAY],
      ["woocommerce:2", HOUR],
    ] as const) {
      await db.register.sources.record({
        sender: "default",
        platform: "woocommerce",
        key,
        outcome: "ignored",
        reason: 'status is "pending"',
        ids: "{}",
        payload: "{}",
        contentType: "application/json",
        correlationId: `c-${key}`,
        receivedAt: Date.now() - age,
      });
    }
    await db.close();
    return ids;
  }

  it("removes SUCCEEDED events older than RETENTION_HOURS (30 days by default) and keeps the rest, FAILED_FINAL ones too", async () => {
    const ids = await fill();
    const before = Date.now();
    const run = gateway(["purge"], db.env);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const [eventsLine, deliveriesLine] = run.stdout.trim().split("\n");
    const match = /^purged 1 SUCCEEDED events older than (\S+Z)$/.exec(eventsLine ?? "");
    // The platforms' ignored deliveries age out with the same bound: the 40-day-old one goes, the hour-old one stays.
    expect(deliveriesLine).toMatch(/^purged 1 ignored platform deliveries received before \S+Z$/);
    const cutoff = Date.parse(match?.[1] ?? "");
    expect(cutoff).toBeGreaterThanOrEqual(before - 30 * DAY);
    expect(cutoff).toBeLessThan(Date.now() - 30 * DAY);
    expect(await survivors(ids)).toEqual(["old-final", "three-days", "young", "old-pending"]);
  });

  it("removes FAILED_FINAL events of that age too with --include-failed, and counts them in a dry run", async () => {
    const ids = await fill();
    const dry = gateway(["purge", "--include-failed", "--dry-run"], db.env);
    expect([dry.status, dry.stderr]).toEqual([0, ""]);
    expect(dry.stdout).toMatch(
      /^would purge 2 finished \(SUCCEEDED and FAILED_FINAL\) events older than \S+Z \(dry run/,
    );
    expect(await survivors(ids)).toEqual(ids);
    const run = gateway(["purge", "--include-failed"], db.env);
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(/^purged 2 finished \(SUCCEEDED and FAILED_FINAL\) events older than \S+Z\n/);
    expect(await survivors(ids)).toEqual(["three-days", "young", "old-pending"]);
  });

  it("takes --older-than-hours and --batch-size over RETENTION_HOURS (with --force below it)", async () => {
    const ids = await fill();
    const run = gateway(["purge", "--older-than-hours", "48", "--batch-size", "1", "--force"], {
      ...db.env,
      RETENTION_HOURS: "2400",
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^purged 2 SUCCEEDED events older than /);
    expect(await survivors(ids)).toEqual(["old-final", "young", "old-pending"]);
  });

  it("--dry-run counts what would go, says the ignored deliveries go too, and changes nothing", async () => {
    const ids = await fill();
    const run = gateway(["purge", "--dry-run"], db.env);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    const [events, deliveries] = lines;
    const match = /^would purge 1 SUCCEEDED events older than (\S+Z) \(dry run: nothing deleted\)$/.exec(events ?? "");
    expect(match).not.toBeNull();
    // The real run purges the platforms' ignored deliveries received before the same bound (docs/operations.md).
    expect(deliveries).toBe(
      `would purge the ignored platform deliveries received before ${match?.[1]} too (a dry run does not count them)`,
    );
    expect(await survivors(ids)).toEqual(ids);
    const left = await db.register.sources.list({ outcome: "ignored", limit: 10 });
    expect(left.map((delivery) => delivery.key)).toEqual(["woocommerce:2", "woocommerce:1"]);
  });

  it("refuses an age under RETENTION_HOURS without --force, exit 2, saying why, deleting nothing", async () => {
    const ids = await fill();
    for (const args of [[], ["--dry-run"]]) {
      const run = gateway(["purge", "--older-than-hours", "719", ...args], db.env);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        /^gateway purge: --older-than-hours 719 is under RETENTION_HOURS \(720\): .*WooCommerce.*new event.*--force/,
      );
      expect(run.stderr).toMatch(/Usage: gateway purge/);
    }
    const shorter = gateway(["purge", "--older-than-hours", "48"], { ...db.env, RETENTION_HOURS: "72" });
    expect(shorter.status).toBe(2);
    expect(shorter.stderr).toMatch(/^gateway purge: --older-than-hours 48 is under RETENTION_HOURS \(72\)/);
    expect(await survivors(ids)).toEqual(ids);
  });

  it("takes an age at or over RETENTION_HOURS without --force", async () => {
    const ids = await fill();
    const run = gateway(["purge", "--older-than-hours", "96"], { ...db.env, RETENTION_HOURS: "96" });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(/^purged 1 SUCCEEDED events older than /);
    expect(await survivors(ids)).toEqual(["old-final", "three-days", "young", "old-pending"]);
  });

  it("refuses an age under a day, exit 2", async () => {
    await db.close();
    const run = gateway(["purge", "--older-than-hours", "1"], db.env);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--older-than-hours must be a whole number from 24 to/);
    expect(run.stderr).toMatch(/Usage: gateway purge/);
  });
});
