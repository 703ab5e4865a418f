import { problems } from "../errors/catalogue.ts";
import { problemDocument } from "../errors/problem.ts";
import { EventStatus } from "./event-status.ts";

/**
 * The first answer an event earns, stored with the event when it finishes
 * and replayed byte for byte to every repeat. A domain fact, not an HTTP
 * detail: the deliverer writes it, the HTTP edge and the CLI read it.
 */
export interface ResponseSnapshot {
  status: number;
  body: string;
}

/** What 1C created for an event: its order's id and number. */
export interface OnecOrder {
  id: string;
  number: string;
}

export const ORDERS_PAID_PATH = "/integration/v1/orders/paid";

/** Where a sender or an administrator polls an event: part of every stored answer. */
export function statusUrl(eventId: string): string {
  return `${ORDERS_PAID_PATH}/${encodeURIComponent(eventId)}`;
}

/** The first answer for a delivered event. */
export function successSnapshot(eventId: string, order: OnecOrder): ResponseSnapshot {
  return {
    status: 201,
    body: JSON.stringify({
      event_id: eventId,
      status: EventStatus.SUCCEEDED,
      order: { id: order.id, number: order.number },
      status_url: statusUrl(eventId),
    }),
  };
}

/** The first answer for an event 1C refused. */
export function refusalSnapshot(
  eventId: string,
  code: "GW_ERR_ONEC_REJECTED" | "GW_ERR_ONEC_CONFLICT",
  detail: string,
  onecError: { code: string; message: string },
  correlationId: string,
): ResponseSnapshot {
  const doc = problemDocument(code, detail, correlationId, { event_id: eventId, status_url: statusUrl(eventId) });
  return { status: problems[code].status, body: JSON.stringify({ ...doc, onec_error: onecError }) };
}

/** The answer for an event the gateway gave up on: support replays it once the cause is fixed. */
export function abandonedSnapshot(
  eventId: string,
  reason: string,
  why: string,
  correlationId: string,
): ResponseSnapshot {
  const doc = problemDocument(
    "GW_ERR_DELIVERY_ABANDONED",
    `delivery to 1C was abandoned (${reason}): ${why}. Do not resend; support can replay it.`,
    correlationId,
    { event_id: eventId, status_url: statusUrl(eventId) },
  );
  return { status: doc.status, body: JSON.stringify(doc) };
}
