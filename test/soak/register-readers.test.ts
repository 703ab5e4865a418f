import { describe, expect, it } from "vitest";
import type { RegisterLocation } from "../../src/config/database-url.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { EventRegister, Settlement } from "../../src/register/port.ts";
import { reserveRequest } from "../support/records.ts";
import {
  PostgresBackend,
  type RegisterBackend,
  registerBackends,
  registerPerTest,
  SqliteBackend,
} from "../support/register-backends.ts";
import { openRegisterReader } from "./register-readers.ts";

const SHOP = "soak-shop";
const ORDER = { id: "8023a5b8-0000-4000-8000-000000000001", number: "ORD-000001" };
const ANSWER = { status: 201, body: '{"status":"SUCCEEDED"}' };
const REPORT = { startedAt: 0, durationMs: 5, outcome: "test" };

function locationOf(backend: RegisterBackend): RegisterLocation {
  if (backend instanceof SqliteBackend) return { kind: "sqlite", path: backend.file };
  if (backend instanceof PostgresBackend) return { kind: "postgres", url: backend.database.url };
  throw new Error(`no location for ${backend.name}`);
}

/**
 * The soak's reader must give the same account on either backend: the
 * backlog as the README defines pending (PROCESSING, FAILED_RETRYABLE), and
 * every column verify.ts compares, with numbers as numbers.
 */
describe.each(registerBackends())("the soak's register reader on $name", (backend) => {
  let register: EventRegister;
  registerPerTest(backend, (opened) => {
    register = opened;
  });

  /** Records the event and settles its first attempt as given. */
  async function settled(eventId: string, settlement: Settlement): Promise<void> {
    const now = Date.now();
    await register.reserve(reserveRequest({ sender: SHOP, eventId, now }));
    const [claim] = await register.claim({
      owner: "w",
      now,
      leaseMs: 60_000,
      limit: 1,
      only: { sender: SHOP, eventId },
    });
    if (claim === undefined) throw new Error(`${eventId} was not claimed`);
    await register.settle(claim.lease, settlement, REPORT, now);
  }

  it("counts the sender's pending events and reads every event's row", async () => {
    await register.reserve(reserveRequest({ sender: SHOP, eventId: "e-new", now: Date.now() }));
    await register.reserve(reserveRequest({ sender: "other-shop", eventId: "e-other", now: Date.now() }));
    await settled("e-done", { status: EventStatus.SUCCEEDED, order: ORDER, response: ANSWER });
    await settled("e-retry", {
      status: EventStatus.FAILED_RETRYABLE,
      error: "1C answered 503",
      errorClass: "onec_unavailable",
      nextAttemptAt: Date.now() + 60_000,
      charged: true,
    });
    await settled("e-final", {
      status: EventStatus.FAILED_FINAL,
      error: "1C refused it",
      errorClass: "onec_rejected",
      response: { status: 422, body: '{"status":"FAILED_FINAL"}' },
    });

    const reader = openRegisterReader(locationOf(backend));
    try {
      expect(await reader.pending(SHOP)).toBe(2);
      expect(await reader.pending("other-shop")).toBe(1);
      const rows = await reader.rows(SHOP);
      expect([...rows.keys()].sort()).toEqual(["e-done", "e-final", "e-new", "e-retry"]);
      expect(rows.get("e-new")).toEqual({
        eventId: "e-new",
        status: "PROCESSING",
        orderId: null,
        orderNumber: null,
        responseStatus: null,
        responseBody: null,
        lastErrorClass: null,
        attempts: 0,
        finishedAttempts: 0,
      });
      expect(rows.get("e-done")).toEqual({
        eventId: "e-done",
        status: "SUCCEEDED",
        orderId: ORDER.id,
        orderNumber: ORDER.number,
        responseStatus: 201,
        responseBody: ANSWER.body,
        lastErrorClass: null,
        attempts: 1,
        finishedAttempts: 1,
      });
      expect(rows.get("e-retry")).toMatchObject({ status: "FAILED_RETRYABLE", lastErrorClass: "onec_unavailable" });
      expect(rows.get("e-final")).toMatchObject({
        status: "FAILED_FINAL",
        lastErrorClass: "onec_rejected",
        responseStatus: 422,
        attempts: 1,
        finishedAttempts: 1,
      });
    } finally {
      await reader.close();
    }
  });
});
