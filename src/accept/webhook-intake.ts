import { hash } from "node:crypto";
import { type Canonical, canonicalizeEvent } from "../domain/fingerprint.ts";
import { type OrderPaidEvent, type SiteOrderKeys, siteOrderKeys } from "../domain/order-paid.ts";
import type { TraceContext } from "../observability/trace-context.ts";
import type { EventRecord } from "../register/port.ts";
import type { RemapAudit, SourceDelivery, SourceDeliveryInput, SourceDeliveryLog } from "../register/source-port.ts";
import type { PlatformIds, SourceAdapter, SourceSettings, WebhookDelivery } from "../sources/port.ts";
import type { AcceptResult } from "./accept-result.ts";
import { KnownBodies } from "./known-bodies.ts";
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
  /**
   * How long the register remembers a finished event (RETENTION_HOURS). A
   * platform that sends a paid order again on each of its updates
   * (SourceAdapter.resendsPaidOrders) may send it long after its event was
   * purged: recording it again would send it to 1C twice. Absent: forever.
   */
  memoryMs?: number;
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
  readonly #memoryMs: number | undefined;
  /** Payments this process has read, by their delivery's identity: a platform's retry repeats its bytes. */
  readonly #known = new KnownBodies<KnownPayment>(KNOWN_PAYMENTS);

  constructor(options: WebhookIntakeOptions) {
    this.#acceptor = options.acceptor;
    this.#deliveries = options.deliveries;
    this.#now = options.now;
    this.#memoryMs = options.memoryMs;
  }

  async take(
    adapter: SourceAdapter,
    settings: SourceSettings,
    delivery: WebhookDelivery,
    correlationId: string,
    trace?: TraceContext,
    verifiedGate?: () => Promise<void>,
  ): Promise<WebhookOutcome> {
    if (adapter.isPing?.(delivery) === true) return { kind: "ping" };
    const verified = adapter.verify(delivery, settings);
    if (!verified.ok) return { kind: "unauthorized", detail: verified.detail };
    // What only a signed delivery may spend (the sender's rate budget): it throws to refuse, before anything is read or recorded.
    if (verifiedGate !== undefined) await verifiedGate();
    // No platform sends a raw NUL (JSON escapes it, a form percent-encodes it), and the payload is kept as text, which PostgreSQL's cannot hold.
    if (delivery.raw.includes(0)) return { kind: "malformed", detail: NUL_IN_BODY };
    const keep = (kept: KeptAs) => keptDelivery(adapter, settings, delivery, kept, correlationId);
    // A retry of a payment already read is answered from what it came to, as a sender's repeated bytes are.
    const identity = deliveryIdentity(adapter, settings, delivery, verified.digest);
    const known = this.#known.recall(identity);
    if (known !== undefined) {
      // The process may remember a payment longer than the register does: its retry is aged like a fresh reading.
      const forgotten = this.#beyondMemory(adapter, known);
      if (forgotten !== undefined) return this.#forgotten(keep, known, forgotten);
      const source = () => keep(acceptedAs(known));
      return this.#accept(adapter, known, { sender: settings.sender, correlationId, source, trace, recognised: true });
    }
    const reading = adapter.read(delivery, settings);
    switch (reading.kind) {
      case "test":
        return { kind: "ping" };
      case "malformed":
        return reading;
      case "ignored":
      case "unmapped":
        return {
          kind: reading.kind,
          delivery: await this.#deliveries.record(
            keep({ key: reading.key ?? "", outcome: reading.kind, reason: reading.reason, ids: reading.ids }),
          ),
        };
      case "paid": {
        const payment = knownPayment(reading);
        const forgotten = this.#beyondMemory(adapter, payment);
        if (forgotten !== undefined) return this.#forgotten(keep, payment, forgotten);
        this.#known.remember(identity, payment);
        const source = () => keep(acceptedAs(payment));
        return this.#accept(adapter, payment, {
          sender: settings.sender,
          correlationId,
          source,
          trace,
          recognised: false,
        });
      }
    }
  }

  /**
   * Why a payment is too old to be recorded, or undefined. An event is purged
   * no sooner than `memoryMs` after it finished, and it finished after it was
   * paid: a payment made within that time (less a margin for the platform's
   * clock) still has its event, if it ever had one.
   */
  #beyondMemory(adapter: SourceAdapter, { paidAt }: KnownPayment): string | undefined {
    // Only a platform that resends a paid order for the order's life can send one that old.
    if (this.#memoryMs === undefined || adapter.resendsPaidOrders !== true) return undefined;
    const forgottenBefore =
      this.#now() - this.#memoryMs + Math.min(CLOCK_MARGIN_MS, this.#memoryMs * CLOCK_MARGIN_SHARE);
    if (!(paidAt < forgottenBefore)) return undefined;
    const days = Math.round(this.#memoryMs / 86_400_000);
    return `paid on ${new Date(paidAt).toISOString()}, before what the register remembers (RETENTION_HOURS, ${days} days): its event may have been purged, and recording it again would send it to 1C a second time`;
  }

  /** A payment too old to record (#beyondMemory): kept for support as ignored, with the reason. */
  async #forgotten(keep: (kept: KeptAs) => SourceDeliveryInput, payment: KnownPayment, reason: string) {
    const kept = keep({ key: payment.eventId, outcome: "ignored", reason, ids: payment.ids });
    return { kind: "ignored" as const, delivery: await this.#deliveries.record(kept) };
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
    audit: RemapAudit,
  ): Promise<WebhookOutcome> {
    const delivery: WebhookDelivery = {
      headers: storedIds(stored).headers,
      raw: Buffer.from(stored.payload, "utf8"),
      receivedAt: stored.receivedAt,
    };
    const reading = adapter.read(delivery, settings);
    if (reading.kind !== "paid") {
      if (reading.kind === "test" || reading.kind === "malformed")
        return { kind: "malformed", detail: "the stored payload no longer reads as an order" };
      return { kind: reading.kind, delivery: { ...stored, reason: reading.reason } };
    }
    const payment = knownPayment(reading);
    // Support may map a delivery again long after it came, and a later update may have become the event since.
    const forgotten = this.#beyondMemory(adapter, payment);
    if (forgotten !== undefined) return { kind: "ignored", delivery: { ...stored, reason: forgotten } };
    const outcome = await this.#accept(adapter, payment, { sender: stored.sender, correlationId, recognised: true });
    if (outcome.kind === "event") await this.#deliveries.markRemapped(stored.id, payment.eventId, this.#now(), audit);
    return outcome;
  }

  async #accept(adapter: SourceAdapter, payment: KnownPayment, how: AcceptedHow): Promise<WebhookOutcome> {
    const { sender, correlationId, source } = how;
    const result = await this.#acceptor.accept({
      sender,
      eventId: payment.eventId,
      canonical: payment.canonical,
      siteOrder: payment.siteOrder,
      correlationId,
      waitMs: Math.floor(adapter.answerWithinMs * WAIT_SHARE),
      ...(source === undefined ? {} : { source }),
      traceContext: how.trace,
      recognised: how.recognised,
    });
    if (result.kind === "event") return { kind: "event", result };
    const repeat = { kind: "event" as const, firstAnswer: false, record: result.record };
    // A platform's retry of the same changed delivery (its bytes, remembered) is kept once, as an unmapped one is.
    if (source === undefined || payment.changeKept === true || sameOrderAsFirst(result.record, payment.canonical))
      return { kind: "event", result: repeat };
    // Marked before the write, so that copies sent at once add no row either; unmarked if the write fails (a 503 the platform retries).
    payment.changeKept = true;
    try {
      const changed = await this.#deliveries.record({
        ...source(),
        outcome: "ignored",
        reason: `the order differs from the one first received under ${payment.eventId}: the first was sent to 1C, this one is not`,
      });
      return { kind: "event", result: repeat, changed };
    } catch (error) {
      delete payment.changeKept;
      throw error;
    }
  }
}

/** Whose payment, and how it came: a remapped one has no delivery of its own to keep, nor a trace. */
interface AcceptedHow {
  sender: string;
  correlationId: string;
  source?: () => SourceDeliveryInput;
  trace?: TraceContext | undefined;
  /** False when read anew from a delivery never seen here: most likely a new event (AcceptRequest.recognised). */
  recognised: boolean;
}

/** What a payment's delivery came to: all a retry of it needs. */
interface KnownPayment {
  eventId: string;
  canonical: Canonical;
  siteOrder: SiteOrderKeys;
  ids: PlatformIds;
  /** When the platform says it was paid (ms): what #beyondMemory ages. */
  paidAt: number;
  /** Set once this delivery was kept as a change of the first (#accept): its retries add no row. */
  changeKept?: true;
}

function knownPayment(paid: { event: OrderPaidEvent; canonical: Canonical; ids: PlatformIds }): KnownPayment {
  return {
    eventId: paid.event.event_id,
    canonical: paid.canonical,
    siteOrder: siteOrderKeys(paid.event),
    ids: paid.ids,
    paidAt: Date.parse(paid.event.payment.paid_at ?? paid.event.occurred_at),
  };
}

/** 2 000 payments of about 2 KB: a platform's retries come within hours, and a miss only reads the bytes again. */
const KNOWN_PAYMENTS = 2000;

/**
 * How far a platform's clock may run ahead of ours when it stamps a payment
 * (a later stamp makes it look younger than it is): a day, or a quarter of
 * what the register remembers when that is less. RETENTION_HOURS may be 24:
 * a margin of a whole day would leave no payment young enough to record.
 */
const CLOCK_MARGIN_MS = 86_400_000;
const CLOCK_MARGIN_SHARE = 0.25;

/**
 * A delivery's identity: the bytes and the headers its adapter reads, under
 * its platform and sender (whose settings the reading depends on, fixed for
 * the process's life). Computed after the signature is checked, so only
 * authentic bytes are ever remembered. The bytes count through the verified
 * signature when it is an HMAC of them (no two bodies share one), else
 * through their own hash.
 */
function deliveryIdentity(
  adapter: SourceAdapter,
  settings: SourceSettings,
  delivery: WebhookDelivery,
  digest: string | undefined,
): string {
  const headers = adapter.readsHeaders.map((name) => {
    const value = delivery.headers[name];
    return typeof value === "string" ? value : "";
  });
  const named = `${adapter.platform}\n${settings.sender}\n${headers.join("\n")}\n`;
  // A verified HMAC is already a digest of the bytes, and short: the identity as it is, with nothing more to hash.
  if (digest !== undefined) return `${named}hmac ${digest}`;
  return `${named}${hash("sha256", delivery.raw, "base64url")}`;
}

/** A platform waits a few seconds at most (Shopify and Tilda 5 s): the request waits for 1C a fifth of that, then answers 202. */
const WAIT_SHARE = 0.2;

/**
 * Whether a delivery's event is the first one's but for its time: a platform
 * whose payload has no time of its own (Tilda) gets the receive time, which
 * differs on each of its retries.
 */
function sameOrderAsFirst(first: EventRecord, canonical: Canonical): boolean {
  const firstEvent = JSON.parse(first.body) as { occurred_at?: unknown };
  const event = JSON.parse(canonical.text) as Record<string, unknown>;
  return (
    canonicalizeEvent({ ...event, occurred_at: firstEvent.occurred_at }, first.policyVersion).fingerprint ===
    first.fingerprint
  );
}

/** The headers the adapters read (the platforms' own and Content-Type), never a signature: what remap reads again. */
function platformHeaders(delivery: WebhookDelivery): Record<string, string> {
  const kept: Record<string, string> = {};
  const { headers } = delivery;
  for (const name in headers) {
    const value = headers[name];
    if (typeof value !== "string" || SIGNATURE_HEADERS.has(name)) continue;
    if (name === "content-type" || name.startsWith("x-shopify-") || name.startsWith("x-wc-")) kept[name] = value;
  }
  return kept;
}

const NUL_IN_BODY = "the body holds a NUL byte (U+0000), which neither JSON nor a form allows unescaped";

const SIGNATURE_HEADERS = new Set(["x-shopify-hmac-sha256", "x-wc-webhook-signature"]);

/** What a delivery is kept as: its key, outcome, reason and the platform's ids. */
export type KeptAs = Pick<SourceDeliveryInput, "key" | "outcome" | "reason"> & { ids: PlatformIds };

function acceptedAs(payment: KnownPayment): KeptAs {
  return { key: payment.eventId, outcome: "accepted", reason: null, ids: payment.ids };
}

/** A delivery as the register keeps it for support: the payload as received, the platform's ids and the headers a remap reads. */
export function keptDelivery(
  adapter: SourceAdapter,
  settings: SourceSettings,
  delivery: WebhookDelivery,
  kept: KeptAs,
  correlationId: string,
): SourceDeliveryInput {
  return {
    sender: settings.sender,
    platform: adapter.platform,
    key: kept.key,
    outcome: kept.outcome,
    reason: kept.reason,
    ids: JSON.stringify({ ids: kept.ids, headers: platformHeaders(delivery) }),
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
