import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { siteOrderOf } from "../support/records.ts";
import { gateway, TestDatabase } from "./cli-support.ts";

describe("the command line with several senders", { timeout: 30_000 }, () => {
  let db: TestDatabase;
  beforeEach(() => {
    db = new TestDatabase();
  });
  afterEach(async () => {
    await db.remove();
  });

  async function sentBy(sender: string, eventId: string): Promise<void> {
    await db.register.reserve({
      sender,
      eventId,
      fingerprint: `fp-${sender}`,
      policyVersion: "test",
      body: "{}",
      ...siteOrderOf("{}"),
      correlationId: `c-${sender}`,
      now: Date.now(),
    });
  }

  it("asks for --sender when two senders used one event_id, and takes it", async () => {
    await sentBy("shop-a", "evt-shared");
    await sentBy("shop-b", "evt-shared");
    await sentBy("shop-b", "evt-only-b");
    await db.close();

    const ambiguous = gateway(["status", "evt-shared"], db.env);
    expect(ambiguous.status).toBe(1);
    expect(ambiguous.stderr).toMatch(/shop-a, shop-b.*--sender/);
    const picked = gateway(["status", "evt-shared", "--sender", "shop-b", "--json"], db.env);
    expect(picked.status).toBe(0);
    expect(JSON.parse(picked.stdout)).toMatchObject({ sender: "shop-b", event_id: "evt-shared" });
    // One sender's id needs no --sender.
    expect(JSON.parse(gateway(["status", "evt-only-b", "--json"], db.env).stdout)).toMatchObject({ sender: "shop-b" });

    const replay = gateway(["replay", "evt-shared", "--sender", "shop-a", "--reason", "check", "--by", "ops"], db.env);
    expect(replay.status).toBe(0);
    expect(db.replays("evt-shared")).toHaveLength(1);
    const list = gateway(["list", "--status", "PROCESSING", "--sender", "shop-b", "--json"], db.env);
    const listed = JSON.parse(list.stdout).map(
      (v: { sender: string; event_id: string }) => `${v.sender}/${v.event_id}`,
    );
    expect(listed.sort()).toEqual(["shop-b/evt-only-b", "shop-b/evt-shared"]);
  });
});
