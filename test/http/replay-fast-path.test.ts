import { describe, expect, it } from "vitest";
import { canonicalizeEvent } from "../../src/domain/fingerprint.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";
import { siteOrderOf } from "../support/records.ts";
import { withWriteLockOn } from "../support/write-lock.ts";

/**
 * Issue 13: a repeat changes nothing, so it is answered from a read, without
 * SQLite's write lock. Proven here with the lock held by another connection
 * on the same file (as a second gateway's transaction would hold it): repeats
 * are still answered at once, while a new event, which needs the lock,
 * meets today's busy behaviour: the gateway waits up to its busy timeout
 * (5 s) and answers 503 with nothing recorded.
 */

const BUSY_TIMEOUT_MS = 5000;
/** Far below the busy timeout: an answer this fast never waited for the lock. */
const PROMPT_MS = 1000;

const h = gatewayWithEmulator({ SYNC_WAIT_MS: "3000", DELIVERY_POLL_MS: "20", BREAKER_FAILURES: "1000" });

/**
 * Runs `work` while another connection holds the register's write lock
 * (BEGIN IMMEDIATE). The gateway's deliverer is stopped meanwhile: its claims
 * are writes, and better-sqlite3 waits for a busy lock synchronously, so one
 * poll would stall the whole process (the test's requests with it) for the
 * busy timeout, whatever the accept path does.
 */
async function withWriteLockHeld<T>(work: () => Promise<T>): Promise<T> {
  return whileDelivererStopped(() => withWriteLockOn(h.gw.databasePath, work));
}

async function whileDelivererStopped<T>(work: () => Promise<T>): Promise<T> {
  const { deliverer } = h.gw.gateway;
  await deliverer.stop();
  try {
    return await work();
  } finally {
    deliverer.start();
  }
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

// Each test may meet the busy timeout (the third always does; the others would if a repeat took the lock).
describe("repeats answered without the write lock", { timeout: BUSY_TIMEOUT_MS * 4 }, () => {
  it("replays a finished event's first answer at once while another connection holds the write lock", async () => {
    const event = orderPaidEvent();
    const first = await postEvent(h.gw.url, event);
    expect(first.status).toBe(201);

    const { value: repeat, ms } = await withWriteLockHeld(() => timed(() => postEvent(h.gw.url, event)));
    expect(repeat.status).toBe(200);
    expect(repeat.headers["idempotent-replayed"]).toBe("true");
    expect(repeat.headers.location).toBe(first.headers.location);
    expect(repeat.text).toBe(first.text);
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it("refuses another body under a recorded event_id with 409 at once while the lock is held", async () => {
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event)).status).toBe(201);
    const changed = structuredClone(event);
    changed.order.customer.email = "someone-else@example.com";

    const { value: conflict, ms } = await withWriteLockHeld(() => timed(() => postEvent(h.gw.url, changed)));
    expect(conflict.status).toBe(409);
    expect(conflict.json()).toMatchObject({
      type: "/integration/v1/problems/event-id-conflict",
      event_id: event.event_id,
    });
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it("answers at once, from a read, a repeat whose bytes it never saw: recorded by another process", async () => {
    const event = orderPaidEvent();
    // Another gateway on the same file records the event: this one never admitted these bytes, so it
    // tries the reserving write first, which waits for the lock; the read that backs it answers.
    const canonical = canonicalizeEvent(event);
    const { value: repeat, ms } = await whileDelivererStopped(async () => {
      const other = new SqliteRegister(h.gw.databasePath);
      await other.reserve({
        sender: "default",
        eventId: event.event_id,
        fingerprint: canonical.fingerprint,
        policyVersion: canonical.policy,
        body: canonical.text,
        ...siteOrderOf(canonical.text),
        correlationId: "other-process",
        now: Date.now(),
      });
      await other.close();
      return withWriteLockHeld(() => timed(() => postEvent(h.gw.url, event)));
    });
    // Pending, as the other process left it (its deliverer never ran): 202, as any repeat of a pending event.
    expect(repeat.status).toBe(202);
    expect(repeat.headers["retry-after"]).toBe("1");
    expect(JSON.parse(repeat.text)).toMatchObject({ event_id: event.event_id, status: "PROCESSING" });
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it("answers a pending event's repeat 202 from the read while the lock is held", async () => {
    const event = orderPaidEvent();
    // With no deliverer running, the first request records the event and answers 202 without waiting.
    const [first, repeat] = await whileDelivererStopped(async () => {
      const recorded = await postEvent(h.gw.url, event);
      return [recorded, await withWriteLockHeld(() => timed(() => postEvent(h.gw.url, event)))] as const;
    });
    expect(first.status).toBe(202);
    expect(repeat.value.status).toBe(202);
    expect(repeat.value.headers["retry-after"]).toBe("1");
    expect(repeat.value.text).toBe(first.text);
    expect(JSON.parse(repeat.value.text)).toMatchObject({ event_id: event.event_id, status: "PROCESSING" });
    expect(repeat.ms).toBeLessThan(PROMPT_MS);
  });

  it("still makes a new event wait for the lock and answer 503 with nothing recorded; once free, it is recorded", async () => {
    const event = orderPaidEvent();
    const { value: refused, ms } = await withWriteLockHeld(() => timed(() => postEvent(h.gw.url, event)));
    expect(refused.status).toBe(503);
    expect(refused.json()).toMatchObject({ type: "/integration/v1/problems/storage-unavailable" });
    expect(refused.headers["retry-after"]).toBeDefined();
    expect(ms).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS - 100);

    const retried = await postEvent(h.gw.url, event);
    expect(retried.status).toBe(201);
    expect(retried.headers["idempotent-replayed"]).toBe("false");
  });
});
