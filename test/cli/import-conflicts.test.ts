import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { siteOrderOf } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";
import { gateway } from "./cli-support.ts";

/**
 * Review finding (LOW): an import line whose sender and event_id the target
 * already holds with other content (another fingerprint) was counted as
 * "already present", exit 0, as if it were the same event. As
 * docs/operations.md now says, it is counted as conflicting, printed (line,
 * event, both fingerprints), left as it is in the target; the rest is imported
 * and the import exits 1 at the end.
 */

const dir = tempDir("gateway-import-conflicts-");
afterAll(() => dir.remove());

const MINUTE = 60_000;
const SENDER = "default";
const source = join(dir.path, "source.db");
const target = join(dir.path, "target.db");
const exportFile = join(dir.path, "export.ndjson");

const conflicting = orderPaidEvent();
const same = orderPaidEvent();
const fresh = orderPaidEvent();

async function reserve(file: string, event: ReturnType<typeof orderPaidEvent>, fingerprint: string, now: number) {
  const register = new SqliteRegister(file);
  try {
    await register.reserve({
      sender: SENDER,
      eventId: event.event_id,
      fingerprint,
      policyVersion: "test",
      body: JSON.stringify(event),
      ...siteOrderOf(JSON.stringify(event)),
      correlationId: `c-${event.event_id}`,
      now,
    });
  } finally {
    await register.close();
  }
}

beforeAll(async () => {
  const now = Date.now();
  // Export order is newest first: the conflicting event (line 2), then the same one (3), then the new one (4).
  await reserve(source, fresh, `fp-${fresh.event_id}`, now - 3 * MINUTE);
  await reserve(source, same, `fp-${same.event_id}`, now - 2 * MINUTE);
  await reserve(source, conflicting, "fp-source", now - MINUTE);
  // The target already holds the same event, and another one under the conflicting event's key.
  await reserve(target, same, `fp-${same.event_id}`, now - 2 * MINUTE);
  const other = { ...conflicting, order: { ...conflicting.order, total: "1.00" } };
  await reserve(target, other, "fp-target", now - MINUTE);
  expect(gateway(["export", "--out", exportFile], { DATABASE_URL: source }).status).toBe(0);
});

describe("gateway import of an event the target holds with other content", { timeout: 60_000 }, () => {
  it("counts it as conflicting, prints it, leaves it, imports the rest and exits 1", async () => {
    const run = gateway(["import", "--in", exportFile], { DATABASE_URL: target });
    expect(run.status).toBe(1);
    expect(run.stderr.split("\n")).toEqual([
      `gateway import: line 2: event ${conflicting.event_id} of sender ${SENDER} is already in ${target} with other content (fingerprint fp-target there, fp-source in the input): left as it was`,
      `gateway import: 1 event conflicted with what ${target} holds (listed above): left as it was there; every other line was imported or already present`,
      "",
    ]);
    const [first, ...table] = run.stdout.split("\n");
    expect(first).toBe(
      `imported 1 events into ${target}; 1 already present (left as they were); 1 conflicting (other content, left as they were)`,
    );
    expect(table[0]).toMatch(/^status +imported +already present +conflicting$/);
    expect(table.find((line) => line.startsWith("PROCESSING"))).toMatch(/^PROCESSING +1 +1 +1$/);

    const register = new SqliteRegister(target);
    try {
      expect((await register.find(SENDER, conflicting.event_id))?.fingerprint).toBe("fp-target");
      expect(await register.find(SENDER, fresh.event_id)).toBeDefined();
    } finally {
      await register.close();
    }
  });
});
