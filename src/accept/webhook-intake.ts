import { canonicalizeEvent } from "../domain/fingerprint.ts";
import type { EventRecord } from "../register/port.ts";
import type { SourceDelivery, SourceDeliveryInput, SourceDeliveryLog } from "../register/source-port.ts";
import type { PlatformIds, Reading, SourceAdapter, SourceSettings, WebhookDelivery } from "../sources/port.ts";
import type { AcceptResult } from "./accept-result.ts";
import type { OrderPaidAcceptor } from "./order-paid-acceptor.ts";

/** What one platform delivery came to; the HTTP edge maps it to the platform's answer (src/http/webhook-answers.ts). */
export type WebhookOutcome =
  /** An unsigned creation ping (WooCommerce) or a signed URL check (Tilda's test=test): nothing recorded. */
  | { kind: "ping" }
  | { kind: "unauthorized"; detail: string }
  | { kind: "malformed"; detail: string }
  | { kind: "ignored"; delivery: SourceDelivery }
  | { kind: "unmapped"; delivery: SourceDelivery }
  /**
   * A payment, recorded as an event (or found: a repeat). A conflict is never
   * answered as such to a platform: it would retry, then drop the webhook.
   * `changed` is kept when the repeat's order differs from the first one's.
   */
  | { kind: "event"; result: Extract<AcceptResult, { kind: "event" }>; changed?: SourceDelivery };

/** How metrics count an outcome: its kind, with a payment split into new and repeated. Every label, for the series shown at 0. */
export const WEBHOOK_OUTCOME_LABELS = [
  "accepted",
  "repeated",
  "ignored",
  "unmapped",
  "ping",
  "unauthorized",
  "malformed",
] as const;

export function webhookOutcomeLabel(outcome: WebhookOutcome): (typeof WEBHOOK_OUTCOME_LABELS)[number] {
  if (outcome.kind !== "event") return outcome.kind;
  return outcome.result.firstAnswer ? "accepted" : "repeated";
}

export interface WebhookIntakeOptions {
  acceptor: OrderPaidAcceptor;
  deliveries: SourceDeliveryLog;
  now: () => number;
}

/**
 * A platform's delivery from its bytes to the register, the same way for
 * every platform: ping, signature, reading; then an ignored or unmapped
 * delivery is kept for support, and a payment goes through the acceptor
 * like any sender's event, with the delivery recorded in its transaction.
 */
export class WebhookIntake {
  readonly #acceptor: OrderPaidAcceptor;
  readonly #deliveries: SourceDeliveryLog;
  readonly #now: () => number;

  constructor(options: WebhookIntakeOptions) {
    this.#acceptor = options.acceptor;
    this.#deliveries = options.deliveries;
    this.#now = options.now;
  }

  async take(
    adapter: SourceAdapter,
    settings: SourceSettings,
    delivery: WebhookDelivery,
    correlationId: string,
  ): Promise<WebhookOutcome> {
    if (adapter.isPing?.(delivery) === true) return { kind: "ping" };
    const verified = adapter.verify(delivery, settings);
    if (!verified.ok) return { kind: "unauthorized", detail: verified.detail };
    const reading = adapter.read(delivery, settings);
    const kept = keptDelivery(adapter, settings, delivery, reading, correlationId);
    switch (reading.kind) {
      case "test":
        return { kind: "ping" };
      case "malformed":
        return reading;
      case "ignored":
      case "unmapped":
        return { kind: reading.kind, delivery: await this.#deliveries.record(kept) };
      case "paid":
        return this.#accept(adapter, reading.event, kept);
    }
  }

  /**
   * Support maps an unmapped delivery again after fixing the sender's
   * settings: the stored bytes and headers are read anew (their signature was
   * checked when they came), and a payment is accepted like a fresh delivery.
   */
  async remap(
    adapter: SourceAdapter,
    settings: SourceSettings,
    stored: SourceDelivery,
    correlationId: string,
  ): Promise<WebhookOutcome> {
    const delivery: WebhookDelivery = {
      headers: storedHeaders(stored),
      raw: Buffer.from(stored.payload, "utf8"),
      receivedAt: stored.receivedAt,
    };
    const reading = adapter.read(delivery, settings);
    if (reading.kind !== "paid") {
      if (reading.kind === "test" || reading.kind === "malformed")
        return { kind: "malformed", detail: "the stored payload no longer reads as an order" };
      return { kind: reading.kind, delivery: { ...stored, reason: reading.reason } };
    }
    const outcome = await this.#accept(adapter, reading.event, undefined, correlationId, stored.sender);
    if (outcome.kind === "event") await this.#deliveries.markRemapped(stored.id, reading.event.event_id, this.#now());
    return outcome;
  }

  async #accept(
    adapter: SourceAdapter,
    event: Extract<Reading, { kind: "paid" }>["event"],
    kept: SourceDeliveryInput | undefined,
    correlationId = kept?.correlationId ?? "",
    sender = kept?.sender ?? "",
  ): Promise<WebhookOutcome> {
    const canonical = canonicalizeEvent(event);
    const result = await this.#acceptor.accept({
      sender,
      eventId: event.event_id,
      canonical,
      correlationId,
      waitMs: Math.floor(adapter.answerWithinMs * WAIT_SHARE),
      ...(kept === undefined ? {} : { source: { ...kept, outcome: "accepted" as const, reason: null } }),
    });
    if (result.kind === "event") return { kind: "event", result };
    const repeat = { kind: "event" as const, firstAnswer: false, record: result.record };
    if (sameOrderAsFirst(result.record, event) || kept === undefined) return { kind: "event", result: repeat };
    const changed = await this.#deliveries.record({
      ...kept,
      outcome: "ignored",
      reason: `the order differs from the one first received under ${event.event_id}: the first was sent to 1C, this one is not`,
    });
    return { kind: "event", result: repeat, changed };
  }
}

/** A platform waits a few seconds at most (Shopify and Tilda 5 s): the request waits for 1C a fifth of that, then answers 202. */
const WAIT_SHARE = 0.2;

/**
 * Whether a delivery's event is the first one's but for its time: a platform
 * whose payload has no time of its own (Tilda) gets the receive time, which
 * differs on each of its retries.
 */
function sameOrderAsFirst(first: EventRecord, event: Extract<Reading, { kind: "paid" }>["event"]): boolean {
  const firstEvent = JSON.parse(first.body) as { occurred_at?: unknown };
  return (
    canonicalizeEvent({ ...event, occurred_at: firstEvent.occurred_at }, first.policyVersion).fingerprint ===
    first.fingerprint
  );
}

/** The headers the adapters read (the platforms' own and Content-Type), never a signature: what remap reads again. */
function platformHeaders(delivery: WebhookDelivery): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.headers)) {
    if (typeof value !== "string" || SIGNATURE_HEADERS.has(name)) continue;
    if (name === "content-type" || name.startsWith("x-shopify-") || name.startsWith("x-wc-")) kept[name] = value;
  }
  return kept;
}

const SIGNATURE_HEADERS = new Set(["x-shopify-hmac-sha256", "x-wc-webhook-signature"]);

function keptDelivery(
  adapter: SourceAdapter,
  settings: SourceSettings,
  delivery: WebhookDelivery,
  reading: Reading,
  correlationId: string,
): SourceDeliveryInput {
  const ids: PlatformIds = "ids" in reading ? reading.ids : {};
  return {
    sender: settings.sender,
    platform: adapter.platform,
    key: reading.kind === "paid" ? reading.event.event_id : "key" in reading ? (reading.key ?? "") : "",
    outcome: reading.kind === "unmapped" ? "unmapped" : reading.kind === "paid" ? "accepted" : "ignored",
    reason: "reason" in reading ? reading.reason : null,
    ids: JSON.stringify({ ids, headers: platformHeaders(delivery) }),
    payload: delivery.raw.toString("utf8"),
    contentType: typeof delivery.headers["content-type"] === "string" ? delivery.headers["content-type"] : null,
    correlationId,
    receivedAt: delivery.receivedAt,
  };
}

/** The ids column holds {ids, headers}: the headers are what a remap reads again. */
export function storedIds(stored: Pick<SourceDelivery, "ids">): { ids: PlatformIds; headers: Record<string, string> } {
  const parsed = JSON.parse(stored.ids) as { ids?: PlatformIds; headers?: Record<string, string> };
  return { ids: parsed.ids ?? {}, headers: parsed.headers ?? {} };
}

function storedHeaders(stored: SourceDelivery): Record<string, string> {
  return storedIds(stored).headers;
}
