import { EventStatus } from "../../src/domain/event-status.ts";
import type { SiteOrderKeys } from "../../src/domain/order-paid.ts";
import type {
  AttemptReport,
  Claim,
  ClaimRequest,
  EventQueue,
  EventRecord,
  RegisterChange,
  ReserveRequest,
  Settlement,
} from "../../src/register/port.ts";

export const T0 = Date.parse("2026-11-30T10:00:00Z");

/** A change as one line, for comparing what watchers were told. */
export function describeChange(change: RegisterChange): string {
  return change.kind === "rescheduled"
    ? `rescheduled ${change.count}`
    : `${change.kind} ${change.eventId} ${change.status}`;
}

/** The event a change is about, if it is about one. */
export function changedEventId(change: RegisterChange): string | undefined {
  return change.kind === "rescheduled" ? undefined : change.eventId;
}

/** A register row as policy functions see it, PROCESSING with one attempt running unless patched. */
export function eventRecord(patch: Partial<EventRecord> = {}): EventRecord {
  return {
    sender: "default",
    eventId: "evt-1",
    fingerprint: "f",
    policyVersion: "p",
    status: EventStatus.PROCESSING,
    correlationId: "c-1",
    body: "{}",
    response: null,
    order: null,
    lastError: null,
    lastErrorClass: null,
    attempts: 1,
    finishedAttempts: 0,
    roundAttempts: 1,
    roundStartedAt: T0,
    leaseOwner: "w",
    leaseToken: 1,
    leaseUntil: T0 + 5000,
    nextAttemptAt: T0,
    receivedAt: T0,
    updatedAt: T0,
    ...patch,
  };
}

/** A reservation of "evt-1" by the default sender at T0, as the register tests send it. */
export function reserveRequest(patch: Partial<ReserveRequest> = {}): ReserveRequest {
  const body = patch.body ?? '{"a":1}';
  return {
    sender: "default",
    eventId: "evt-1",
    fingerprint: "fp-1",
    policyVersion: "v1",
    body,
    ...siteOrderOf(body),
    correlationId: "c-1",
    now: T0,
    ...patch,
  };
}

/**
 * What a caller that parsed this body passes with it (ReserveRequest's
 * SiteOrderKeys): its order.id and order.number, or "-" for a test body
 * without an order.
 */
export function siteOrderOf(body: string): SiteOrderKeys {
  const order = (JSON.parse(body) as { order?: { id?: string; number?: string } }).order;
  return { siteOrderId: order?.id ?? "-", siteOrderNumber: order?.number ?? "-" };
}

const SEARCH_KEY_INDEXES = [
  "inbound_events_by_correlation_id",
  "inbound_events_by_order_id",
  "inbound_events_by_order_number",
  "inbound_events_by_site_order_id",
  "inbound_events_by_site_order_number",
];

/**
 * The indexes the console's search must be answered from, sorted: one per key it matches. On SQLite
 * the event_id's is the primary key (event_id, sender) since migration 0009, under SQLite's own name.
 */
export const SEARCH_INDEXES = {
  postgres: [...SEARCH_KEY_INDEXES, "inbound_events_by_event_id"].sort(),
  sqlite: [...SEARCH_KEY_INDEXES, "sqlite_autoindex_inbound_events_1"].sort(),
};

/** A claim by worker-a at T0: a one-second lease on at most ten due events. */
export function claimRequest(patch: Partial<ClaimRequest> = {}): ClaimRequest {
  return { owner: "worker-a", now: T0, leaseMs: 1000, limit: 10, ...patch };
}

/** The one claim a test expects `register` to hand out; throws when there is none. */
export async function claimOne(register: EventQueue, patch: Partial<ClaimRequest> = {}): Promise<Claim> {
  const [claim] = await register.claim(claimRequest(patch));
  if (claim === undefined) throw new Error("nothing claimed");
  return claim;
}

/** What 1C created, the answer it gave, the attempt's report, and the settlement they make. */
export const order = { id: "o-1", number: "ORD-1" };
export const responseSnapshot = { status: 201, body: '{"ok":true}' };
export const report: AttemptReport = { startedAt: T0, durationMs: 12, outcome: "delivered", httpStatus: 201 };
export const succeeded: Settlement = { status: EventStatus.SUCCEEDED, order, response: responseSnapshot };
