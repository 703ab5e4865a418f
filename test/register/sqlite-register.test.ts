import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/register/event-status.ts";
import { type ReserveRequest, StorageUnavailableError } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { tempDir } from "../support/temp.ts";

const T0 = Date.parse("2026-11-30T10:00:00Z");

function request(patch: Partial<ReserveRequest> = {}): ReserveRequest {
  return {
    sender: "default",
    eventId: "evt-1",
    fingerprint: "fp-1",
    policyVersion: "v1",
    body: '{"a":1}',
    correlationId: "c-1",
    now: T0,
    leaseOwner: "worker-a",
    leaseMs: 1000,
    ...patch,
  };
}

const order = { id: "o-1", number: "ORD-1" };
const snapshot = { status: 201, body: '{"ok":true}' };

describe("SqliteRegister", () => {
  let dir: ReturnType<typeof tempDir>;
  let register: SqliteRegister;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, "register.db");
    register = new SqliteRegister(file);
  });
  afterEach(async () => {
    await register.close();
    dir.remove();
  });

  it("creates a row once and takes the first lease", async () => {
    const created = await register.reserve(request());
    expect(created.outcome).toBe("created");
    expect(created.record).toMatchObject({ status: EventStatus.PROCESSING, attempts: 1, leaseOwner: "worker-a" });
    expect(created.outcome === "created" && created.lease.token).toBe(1);
    const again = await register.reserve(request({ leaseOwner: "worker-b", now: T0 + 10 }));
    expect(again.outcome).toBe("existing");
    expect(again.record.leaseOwner).toBe("worker-a");
  });

  it("never claims an event whose fingerprint differs", async () => {
    await register.reserve(request());
    const other = await register.reserve(request({ fingerprint: "fp-2", now: T0 + 5000 }));
    expect(other.outcome).toBe("existing");
    expect(other.record.fingerprint).toBe("fp-1");
  });

  it("lets a new claim take over an expired lease, and fences the old holder out", async () => {
    const first = await register.reserve(request());
    if (first.outcome === "existing") throw new Error("expected a lease");
    const second = await register.reserve(request({ leaseOwner: "worker-b", now: T0 + 1001 }));
    expect(second.outcome).toBe("claimed");
    if (second.outcome !== "claimed") return;
    expect([second.lease.token, second.record.attempts]).toEqual([2, 2]);

    // The stale holder finishes late: its write must not land.
    expect(
      await register.settle(first.lease, { status: EventStatus.SUCCEEDED, order, response: snapshot }, T0 + 1100),
    ).toBeUndefined();
    const settled = await register.settle(
      second.lease,
      { status: EventStatus.FAILED_RETRYABLE, error: "http_503", nextAttemptAt: T0 + 5000 },
      T0 + 1200,
    );
    expect(settled).toMatchObject({ status: EventStatus.FAILED_RETRYABLE, leaseUntil: null, nextAttemptAt: T0 + 5000 });
  });

  it("waits for next_attempt_at before claiming a retryable event", async () => {
    const first = await register.reserve(request());
    if (first.outcome === "existing") throw new Error("expected a lease");
    await register.settle(
      first.lease,
      { status: EventStatus.FAILED_RETRYABLE, error: "x", nextAttemptAt: T0 + 3000 },
      T0,
    );
    expect((await register.reserve(request({ now: T0 + 2999 }))).outcome).toBe("existing");
    expect((await register.reserve(request({ now: T0 + 3000 }))).outcome).toBe("claimed");
  });

  it("keeps a finished event finished", async () => {
    const first = await register.reserve(request());
    if (first.outcome === "existing") throw new Error("expected a lease");
    const done = await register.settle(
      first.lease,
      { status: EventStatus.SUCCEEDED, order, response: snapshot },
      T0 + 1,
    );
    expect(done).toMatchObject({ status: EventStatus.SUCCEEDED, order, response: snapshot });
    const later = await register.reserve(request({ now: T0 + 60_000 }));
    expect(later.outcome).toBe("existing");
    expect(
      await register.settle(first.lease, { status: EventStatus.FAILED_FINAL, error: "x", response: snapshot }, T0 + 2),
    ).toBeUndefined();
  });

  it("scopes events by sender", async () => {
    await register.reserve(request());
    expect((await register.reserve(request({ sender: "shop-b" }))).outcome).toBe("created");
    expect(await register.find("shop-c", "evt-1")).toBeUndefined();
  });

  it("runs in WAL mode with synchronous=FULL, at the latest schema version", () => {
    expect(register.durability()).toEqual({ journalMode: "wal", synchronous: "FULL" });
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it("reports a write lock held past the busy timeout as StorageUnavailableError", async () => {
    const impatient = new SqliteRegister(file, { busyTimeoutMs: 50 });
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    try {
      await expect(impatient.reserve(request({ eventId: "evt-locked" }))).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect((await impatient.reserve(request({ eventId: "evt-locked" }))).outcome).toBe("created");
    await impatient.close();
  });
});
