import { storedIds } from "../../accept/webhook-intake.ts";
import { statusUrl } from "../../domain/first-answer.ts";
import type { DeliveryForReader } from "../../operations/remap-delivery.ts";
import type { EventRecord } from "../../register/port.ts";
import type { SourceDelivery } from "../../register/source-port.ts";
import { iso } from "../../views/event-views.ts";

/**
 * A platform delivery as the admin API writes it. The stored headers stay
 * out: they are what a remap reads again, not something support matches on.
 */
export function deliveryView(delivery: SourceDelivery) {
  return {
    id: delivery.id,
    sender: delivery.sender,
    platform: delivery.platform,
    key: delivery.key,
    outcome: delivery.outcome,
    reason: delivery.reason,
    event_id: delivery.eventId,
    ids: storedIds(delivery).ids,
    content_type: delivery.contentType,
    correlation_id: delivery.correlationId,
    received_at: iso(delivery.receivedAt),
    remapped_at: delivery.remappedAt === null ? null : iso(delivery.remappedAt),
    remapped_by: delivery.remappedBy,
    remap_reason: delivery.remapReason,
  };
}

/** One delivery with its payload, as the reader may see it. */
export function deliveryDetailView(seen: DeliveryForReader) {
  return { ...deliveryView(seen.delivery), payload: seen.payload, payload_masked: seen.masked };
}

/** A delivery mapped again: the event it became, whose status URL the shop's sender token reads. */
export function remappedView(delivery: SourceDelivery, record: EventRecord) {
  return {
    delivery_id: delivery.id,
    sender: record.sender,
    event_id: record.eventId,
    status: record.status,
    status_url: statusUrl(record.eventId),
  };
}
