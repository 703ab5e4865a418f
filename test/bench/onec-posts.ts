import { randomUUID } from "node:crypto";
import { type Dispatcher, request } from "undici";
import { type Canonical, canonicalizeEvent } from "../../src/domain/fingerprint.ts";
import { orderPaidExample } from "./load.ts";

/**
 * Straight to the 1C emulator, the baselines the gateway's delivery is set
 * beside: the drain scenario's raw POSTs (drain.ts) and the sync scenario's
 * direct POSTs (sync-overhead.ts) send what the gateway's OnecClient sends,
 * minus its classification, so both measure the same request.
 */

/** The shared example under a new event_id, in the canonical form the gateway stores and sends to 1C. */
export interface CanonicalEvent {
  readonly eventId: string;
  readonly correlationId: string;
  readonly canonical: Canonical;
}

/** `count` events under ids `<prefix>-<run>-<n>`, unique across runs. */
export function canonicalEvents(prefix: string, count: number): CanonicalEvent[] {
  const example = orderPaidExample();
  const run = `${Date.now().toString(36)}-${process.pid}`;
  return Array.from({ length: count }, (_, i) => {
    const eventId = `${prefix}-${run}-${i + 1}`;
    const canonical = canonicalizeEvent({ ...example, event_id: eventId });
    return { eventId, correlationId: randomUUID(), canonical };
  });
}

/** One POST with the OnecClient's headers; resolves with the status once the body is read. */
export async function postToOnec(
  onecUrl: string,
  dispatcher: Dispatcher,
  event: CanonicalEvent,
  idempotencyKey: string,
): Promise<number> {
  const response = await request(`${onecUrl}/v1/orders/paid`, {
    method: "POST",
    dispatcher,
    headers: {
      "content-type": "application/json; charset=utf-8",
      accept: "application/json",
      "x-correlation-id": event.correlationId,
      "idempotency-key": idempotencyKey,
    },
    body: event.canonical.text,
  });
  await response.body.text();
  return response.statusCode;
}

export async function emulatorOrderKeys(onecUrl: string): Promise<string[]> {
  const response = await request(`${onecUrl}/_emulator/orders`);
  const text = await response.body.text();
  const { orders } = (response.statusCode === 200 ? JSON.parse(text) : {}) as { orders?: { key?: unknown }[] };
  if (!Array.isArray(orders)) throw new Error(`GET /_emulator/orders answered ${response.statusCode}: ${text}`);
  return orders.map(({ key }) => String(key));
}

export async function resetEmulator(onecUrl: string): Promise<void> {
  const response = await request(`${onecUrl}/_emulator/reset`, { method: "POST" });
  await response.body.dump();
  if (response.statusCode !== 204) throw new Error(`POST /_emulator/reset answered ${response.statusCode}`);
}
