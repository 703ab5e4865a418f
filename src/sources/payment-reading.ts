import { admitOrderPaid } from "../accept/admit-order-paid.ts";
import type { OrderPaidEvent } from "../domain/order-paid.ts";
import { MappingError } from "./mapping.ts";
import type { PlatformIds, Reading } from "./port.ts";

/**
 * A payment's reading, the same for every platform: the mapped event when
 * the gateway admits it (schema and business rules, as for any sender),
 * else unmapped with the reason, so that a `paid` reading is always an event
 * the register takes.
 */
export function paymentReading(key: string, ids: PlatformIds, map: () => OrderPaidEvent): Reading {
  let event: OrderPaidEvent;
  try {
    event = map();
  } catch (error) {
    if (error instanceof MappingError) return { kind: "unmapped", key, reason: error.message, ids };
    throw error;
  }
  const admission = admitOrderPaid(event, undefined);
  if (admission.ok) return { kind: "paid", event, ids, canonical: admission.canonical };
  const errors = (admission.errors ?? []).map((error) => `${error.path} ${error.message}`);
  const reason = errors.length === 0 ? admission.detail : `${admission.detail}: ${errors.join("; ")}`;
  return { kind: "unmapped", key, reason, ids };
}
