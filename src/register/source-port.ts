/** The platform deliveries' part of the register's contract (port.ts holds the events'). */

/**
 * What became of one delivery of a platform's webhook (Shopify, WooCommerce,
 * Tilda), kept for support with the payload as received:
 * - accepted: it meant "paid" and mapped to an event, recorded under `eventId`
 *   in the same transaction as the event itself (ReserveRequest.source);
 * - ignored: it did not mean "paid" (an unpaid update, a test order), or it
 *   repeated an order already sent with other content; nothing goes to 1C;
 * - unmapped: it meant "paid" but could not be turned into an event (an
 *   unknown SKU, a currency not configured): kept, one row per key, until
 *   support fixes the mapping and maps it again (`remapped`).
 * Only the first delivery of an accepted event is kept: its repeats write nothing.
 */
export type SourceOutcome = "accepted" | "ignored" | "unmapped";

export interface SourceDeliveryInput {
  sender: string;
  /** "shopify" | "woocommerce" | "tilda". */
  platform: string;
  /** The platform's stable key for the order's payment: the event_id when it maps. */
  key: string;
  outcome: SourceOutcome;
  /** Why it was ignored or left unmapped; null when accepted. */
  reason: string | null;
  /** The platform's own ids from headers and payload (webhook id, topic, delivery id…), JSON text. */
  ids: string;
  /** The body as received (UTF-8 text), and its Content-Type. */
  payload: string;
  contentType: string | null;
  correlationId: string;
  receivedAt: number;
}

export interface SourceDelivery extends SourceDeliveryInput {
  id: number;
  /** The event it became: set for accepted, and for an unmapped delivery once mapped again. */
  eventId: string | null;
  /** When an unmapped delivery was mapped again by support; null otherwise. */
  remappedAt: number | null;
  /** Who mapped it again (the operator's name) and why; null otherwise, and for a remap before migration 0010. */
  remappedBy: string | null;
  remapReason: string | null;
}

/** Who maps a delivery again, and why: kept on it, as a replay's are in event_replays. */
export interface RemapAudit {
  by: string;
  reason: string;
}

/**
 * A delivery as another register held it (`gateway import`): everything but
 * its id, which the register it moves into gives anew.
 */
export type MovedDelivery = Omit<SourceDelivery, "id">;

export interface SourceDeliveryFilter {
  sender?: string;
  platform?: string;
  outcome?: SourceOutcome;
  /** Newest first, strictly before this id (keyset paging). */
  beforeId?: number;
  limit: number;
}

export interface SourceDeliveryLog {
  /**
   * Keeps an ignored or unmapped delivery. An unmapped one is kept once per
   * (sender, platform, key): a retry storm of one unmappable order is one
   * row, and the call returns the row already there. Accepted deliveries are
   * written by reserve, never here: an accepted one is refused (TypeError).
   */
  record(delivery: SourceDeliveryInput): Promise<SourceDelivery>;
  find(id: number): Promise<SourceDelivery | undefined>;
  /**
   * The delivery an event came from, if it came from a platform: its accepted
   * one, or else the unmapped one remapped to it.
   */
  ofEvent(sender: string, eventId: string): Promise<SourceDelivery | undefined>;
  list(filter: SourceDeliveryFilter): Promise<SourceDelivery[]>;
  /**
   * An unmapped delivery now recorded as event `eventId` (support fixed the
   * mapping), which must be reserved first: the row then belongs to that event
   * and goes with it when it is purged. False if it was not unmapped, or was
   * remapped already.
   */
  markRemapped(id: number, eventId: string, now: number, audit: RemapAudit): Promise<boolean>;
  /**
   * Deletes ignored deliveries received before `olderThan`, at most
   * `batchSize`, in one short write transaction; how many went. Accepted and
   * remapped ones go only with their event (purgeFinished). An unmapped one is
   * never purged: it is a payment the platform was told is recorded, and it
   * waits for support as a pending event waits for 1C.
   */
  purge(request: { olderThan: number; batchSize: number }): Promise<number>;
  /**
   * The ignored and unmapped deliveries (remapped or not), oldest first,
   * strictly after the id `afterId` (keyset paging): what `gateway export`
   * writes besides the events, whose accepted deliveries go with them
   * (ofEvent). Oldest first, so that importDelivery gives them new ids in
   * the order they came.
   */
  exportPage(request: { afterId: number; limit: number }): Promise<SourceDelivery[]>;
  /**
   * Writes an ignored or unmapped delivery as another register held it
   * (`gateway import`), under a new id, with its times, its event and its
   * remapping as they were; a remapped one needs its event recorded first.
   * Already "present", and left as it is: an unmapped one whose (sender,
   * platform, key) is kept, or an ignored one with the same sender, platform,
   * key, received_at and correlation id, so that an import run again adds
   * nothing. An accepted one is refused (TypeError): it goes in with its
   * event (EventSnapshot.source).
   */
  importDelivery(delivery: MovedDelivery): Promise<"imported" | "present">;
}
