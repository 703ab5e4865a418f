import type { IncomingHttpHeaders } from "node:http";
import type { Canonical } from "../domain/fingerprint.ts";
import type { OrderPaidEvent } from "../domain/order-paid.ts";

/**
 * A source adapter turns one platform's native "order paid" webhook into our
 * order-paid event. Pure: no clock, no I/O; the HTTP edge
 * (src/http/routes/webhooks.ts) hands it the bytes as received and does
 * everything else the same way for every platform: the register, exactly
 * once, delivery to 1C, the console.
 *
 * The order of the calls is the contract:
 *   isPing (unsigned platform pings only) → verify (before anything parses
 *   the bytes) → read (parse, decide "paid", find the key, map).
 */
export type Platform = "shopify" | "woocommerce" | "tilda";

export const PLATFORMS: readonly Platform[] = ["shopify", "woocommerce", "tilda"];

export interface WebhookDelivery {
  /** As Node gives them: names in lower case. */
  headers: IncomingHttpHeaders;
  /** The body's bytes as received: signatures are over these, never over a re-serialisation. */
  raw: Buffer;
  /** The secret path segment of a platform that signs nothing (Tilda); undefined elsewhere. */
  urlToken?: string | undefined;
  /** When the gateway received it (epoch ms): the event's time for a platform whose payload has none. */
  receivedAt: number;
}

/** One sender's platform, as SOURCES_FILE configures it (src/config/sources.ts). */
export interface SourceSettings {
  sender: string;
  platform: Platform;
  /** Any of them verifies a delivery: two during a rotation, the new and the old. */
  secrets: readonly string[];
  /**
   * The ISO 4217 code of the money booked. Tilda's payload names none, so it
   * is required there; elsewhere a delivery in another currency is unmapped.
   */
  currency?: string | undefined;
  /** The platform's SKU → 1C's article. When set, a SKU missing from it is unknown and the order is unmapped. */
  skus?: ReadonlyMap<string, string> | undefined;
  /** The platform's shipping method (code or id) → our delivery.method. Unlisted methods pass as they are. */
  shippingMethods?: ReadonlyMap<string, string> | undefined;
  /** Shopify: the only X-Shopify-Shop-Domain accepted (one app secret may sign for many shops). */
  shopDomain?: string | undefined;
  /** Shopify: book the shop's currency (the default) or the one the customer paid in. */
  money?: "shop" | "presentment" | undefined;
  /** Shopify: test orders (`test: true`) are ignored unless this is true. */
  acceptTestOrders?: boolean | undefined;
}

/** The platform's own ids of a delivery (webhook id, topic, delivery id…): kept for support, never part of the event. */
export type PlatformIds = Readonly<Record<string, string>>;

export type Reading =
  /** The platform's check that the URL works (Tilda's test=test): answer, record nothing. */
  | { kind: "test" }
  /** Not the platform's format (bad JSON, not a form, no order): 400, record nothing. */
  | { kind: "malformed"; detail: string }
  /** Authentic, and not a payment (unpaid status, test order, another topic): 2xx, recorded as ignored. */
  | { kind: "ignored"; key: string | null; reason: string; ids: PlatformIds }
  /** A payment that cannot be mapped (unknown SKU, currency not configured, sums that disagree): 2xx, kept for support. */
  | { kind: "unmapped"; key: string; reason: string; ids: PlatformIds }
  /** A payment: `event.event_id` is the platform's stable key for it; `canonical` is its form as admitted. */
  | { kind: "paid"; event: OrderPaidEvent; ids: PlatformIds; canonical: Canonical };

export type Verified = { ok: true; digest?: string } | { ok: false; detail: string };

export interface SourceAdapter {
  readonly platform: Platform;
  /**
   * How an accepted delivery is answered: "json" is our own answer (201, 200,
   * 202 with the status URL); "plain-ok" is 200 with the text `ok`, which
   * Tilda waits for.
   */
  readonly answerStyle: "json" | "plain-ok";
  /** The longest a platform waits for an answer, in ms: the edge answers well inside it. */
  readonly answerWithinMs: number;
  /**
   * The headers `read` depends on besides the bytes (lower case): with the
   * bytes they make a delivery's identity, so that a retry of the same
   * delivery is recognised without reading it again.
   */
  readonly readsHeaders: readonly string[];
  /**
   * Whether the platform sends a paid order again on each later update of it,
   * for the order's life (WooCommerce's order webhooks), not only around the
   * payment with retries for hours (Shopify's orders/paid, Tilda's
   * notification): a payment older than the register's memory is then not
   * recorded again (WebhookIntake).
   */
  readonly resendsPaidOrders?: true;
  /**
   * A ping the platform sends unsigned when a webhook is created (WooCommerce's
   * `webhook_id=N`): answered 200, nothing recorded. Checked before verify.
   */
  isPing?(delivery: WebhookDelivery): boolean;
  /**
   * The signature (or secret) over the raw bytes, compared in constant time; the reason when it fails.
   * A signature that is a keyed digest of the bytes (an HMAC) comes back as `digest`: verified, it
   * identifies them as a hash of them would, so a retry is recognised without hashing the body again.
   */
  verify(delivery: WebhookDelivery, settings: SourceSettings): Verified;
  /** Only after verify: parse, decide whether it means "paid", map. */
  read(delivery: WebhookDelivery, settings: SourceSettings): Reading;
}
