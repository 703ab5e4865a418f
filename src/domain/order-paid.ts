/** The order-paid event as `schemas/order-paid.schema.json` admits it. */
export interface OrderPaidEvent {
  event_id: string;
  event_type: "order.paid";
  occurred_at: string;
  order: {
    id: string;
    number: string;
    created_at?: string;
    customer: { id?: string; name: string; email?: string; phone?: string };
    items: Array<{ sku: string; name?: string; quantity: number; price: string }>;
    delivery?: { method?: string; address?: string; price: string };
    total: string;
    /** The tax included in total. */
    tax?: string;
    currency: string;
  };
  payment: {
    id: string;
    provider?: string;
    amount: string;
    currency: string;
    paid_at?: string;
  };
}

/**
 * The site's own keys of the order, the ones support searches by: the SQLite
 * register keeps them beside the body (its migration 0009), given at
 * reservation by whoever parsed the event, so that it never parses a body to
 * index it.
 */
export interface SiteOrderKeys {
  siteOrderId: string;
  siteOrderNumber: string;
}

export function siteOrderKeys(event: OrderPaidEvent): SiteOrderKeys {
  return { siteOrderId: event.order.id, siteOrderNumber: event.order.number };
}

/**
 * 1-128 of `A-Z a-z 0-9 . _ : -`, but not "." or "..": the status URL ends in
 * the id, and clients resolve those two as dot segments (RFC 3986 §5.2.4), so
 * a Location ending in them could never be followed. Kept equal to
 * `$defs/eventId` in schemas/order-paid.schema.json.
 */
export const EVENT_ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,128}$/;

export function isValidEventId(value: unknown): value is string {
  return typeof value === "string" && EVENT_ID_PATTERN.test(value);
}
