import { randomUUID } from "node:crypto";
import { storedIds, type WebhookIntake } from "../accept/webhook-intake.ts";
import type { Principal } from "../config/operators.ts";
import type { EventRecord } from "../register/port.ts";
import type { SourceDelivery, SourceDeliveryLog } from "../register/source-port.ts";
import {
  PLATFORMS,
  type Platform,
  type PlatformIds,
  type SourceAdapter,
  type SourceSettings,
} from "../sources/port.ts";
import { maskPersonalData } from "../views/mask-personal-data.ts";
import { allowed, refusal } from "./authorization.ts";

/**
 * Support's operations on a platform's delivery (Shopify, WooCommerce,
 * Tilda), the same from the admin API and the console: reading it as the
 * reader's role allows, and mapping an unmapped one again once the sender's
 * settings are fixed.
 */

/** The platforms' side of the gateway, built once in buildApp: what the webhook routes take deliveries with. */
export interface PlatformWebhooks {
  intake: WebhookIntake;
  adapters: Readonly<Record<Platform, SourceAdapter>>;
  /** SOURCES_FILE as the gateway runs now: a remap reads the delivery with these, not with the ones it came under. */
  sources: readonly SourceSettings[];
}

/** Remapping sends an order to 1C: whoever may replay an event may do it, and must say why. */
export const REMAP_ACTION = "events.replay";

export interface RemapCommand {
  id: number;
  by: Principal;
  reason: string;
  correlationId: string;
}

export type RemapOutcome =
  | { kind: "forbidden"; detail: string }
  | { kind: "missing" }
  /** Not unmapped, mapped already, or its platform is no longer configured for the sender. */
  | { kind: "refused"; detail: string; delivery: SourceDelivery }
  /** Read again with today's settings, and it still does not map. */
  | { kind: "unmapped"; reason: string; delivery: SourceDelivery }
  /** Recorded as an event, which goes to 1C like any other. */
  | { kind: "mapped"; record: EventRecord; delivery: SourceDelivery };

export async function remapDelivery(
  deliveries: SourceDeliveryLog,
  webhooks: PlatformWebhooks,
  command: RemapCommand,
): Promise<RemapOutcome> {
  if (!allowed(command.by.role, REMAP_ACTION)) return { kind: "forbidden", detail: refusal(command.by, REMAP_ACTION) };
  const delivery = await deliveries.find(command.id);
  if (delivery === undefined) return { kind: "missing" };
  const refused = whyNotRemappable(delivery);
  if (refused !== undefined) return { kind: "refused", detail: refused, delivery };
  const platform = PLATFORMS.find((candidate) => candidate === delivery.platform);
  const settings = webhooks.sources.find((s) => s.platform === platform && s.sender === delivery.sender);
  if (platform === undefined || settings === undefined) {
    return {
      kind: "refused",
      detail: `no ${delivery.platform} webhook is configured for sender "${delivery.sender}" now (SOURCES_FILE); configure it, then map the delivery again`,
      delivery,
    };
  }
  const outcome = await webhooks.intake.remap(webhooks.adapters[platform], settings, delivery, command.correlationId, {
    by: command.by.name,
    reason: command.reason,
  });
  switch (outcome.kind) {
    case "event":
      return { kind: "mapped", record: outcome.result.record, delivery };
    case "ignored":
    case "unmapped":
      return { kind: "unmapped", reason: outcome.delivery.reason ?? "it does not read as a payment", delivery };
    case "malformed":
    case "unauthorized":
      return { kind: "unmapped", reason: outcome.detail, delivery };
    case "ping":
      return { kind: "unmapped", reason: "it reads as the platform's test request, not as an order", delivery };
  }
}

/** Only an unmapped delivery waits for support, and only until it is mapped once. */
function whyNotRemappable(delivery: SourceDelivery): string | undefined {
  if (delivery.outcome !== "unmapped") {
    return `delivery ${delivery.id} was ${delivery.outcome}, not unmapped: only an unmapped delivery is mapped again`;
  }
  if (delivery.remappedAt !== null) {
    return `delivery ${delivery.id} was mapped again already${delivery.eventId === null ? "" : `, as event "${delivery.eventId}"`}`;
  }
  return undefined;
}

/** One delivery as a reader sees it. */
export interface DeliveryForReader {
  delivery: SourceDelivery;
  /** The platform's ids (webhook id, topic, shop…); never the stored headers. */
  ids: PlatformIds;
  /** As received, or with e-mail addresses and phone numbers masked. */
  payload: string;
  masked: boolean;
}

/**
 * The payload is what a customer's order looked like on the platform: a
 * reader who may not read personal data (a viewer) gets it with e-mail
 * addresses and phone numbers masked, as an event's body.
 */
export function deliveryForReader(delivery: SourceDelivery, reader: Principal): DeliveryForReader {
  const masked = !allowed(reader.role, "personal-data.read");
  return {
    delivery,
    ids: storedIds(delivery).ids,
    payload: masked ? maskedPayload(delivery.payload, delivery.contentType) : delivery.payload,
    masked,
  };
}

/**
 * A JSON payload (a leading byte order mark aside, as the adapters read it)
 * is masked field by field and written again, indented, every number as it
 * was written (Shopify's ids are past 2^53: a round trip through a double
 * would change them). A form's fields are masked by their names, a form
 * being what an adapter reads as one: form-encoded, or sent as text/plain or
 * with no Content-Type (Tilda). Anything else could hold a phone number no
 * pattern finds, so it is not shown masked but withheld.
 */
export function maskedPayload(payload: string, contentType: string | null): string {
  const json = maskedJson(payload.startsWith(BYTE_ORDER_MARK) ? payload.slice(1) : payload);
  if (json !== undefined) return json;
  const media = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (media === "application/x-www-form-urlencoded" || media === "text/plain" || media === "") {
    const masked = new URLSearchParams();
    for (const [name, value] of new URLSearchParams(payload)) {
      // A name is shown as it is: text that is no form (its whole self a "name") is withheld instead.
      if (!FIELD_NAME.test(name)) return WITHHELD;
      // Alone under its own name, so that `Email` or `phone` says what the value is.
      const one = maskPersonalData({ [name]: value }) as Record<string, unknown>;
      masked.append(name, String(one[name] ?? ""));
    }
    return masked.toString();
  }
  return WITHHELD;
}

const BYTE_ORDER_MARK = "\uFEFF";

/** A form field's name as platforms write them (`Email`, `payment[products][0][name]`): never a phone or an address. */
const FIELD_NAME = /^[A-Za-z_][\w[\].-]{0,127}$/;

/** What a reader who may not see personal data gets for a payload that cannot be masked field by field. */
export const WITHHELD =
  "(withheld: this payload is neither JSON nor a form, so its personal data cannot be masked for your role)";

function maskedJson(payload: string): string | undefined {
  const mark = `__number_${randomUUID()}__:`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === "number" && context?.source !== undefined && String(value) !== context.source
        ? `${mark}${context.source}`
        : value,
    );
  } catch {
    return undefined;
  }
  const text = JSON.stringify(maskPersonalData(parsed), null, 2);
  return text.replace(new RegExp(`"${mark}(-?[0-9][0-9.eE+-]*)"`, "g"), "$1");
}
