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
    event = ((): any => { const T = (globalThis as any).__T ??= { n: 0 }; const t = ((u) => (u.user + u.system) / 1000)(process.threadCpuUsage()); try { return map(); } finally { T["map"] = (T["map"] ?? 0) + ((u) => (u.user + u.system) / 1000)(process.threadCpuUsage()) - t; } })();
  } catch (error) {
    if (error instanceof MappingError) return { kind: "unmapped", key, reason: error.message, ids };
    throw error;
  }
  const admission = ((): any => { const T = (globalThis as any).__T ??= { n: 0 }; const t = ((u) => (u.user + u.system) / 1000)(process.threadCpuUsage()); try { return admitOrderPaid(event, undefined); } finally { T["admit"] = (T["admit"] ?? 0) + ((u) => (u.user + u.system) / 1000)(process.threadCpuUsage()) - t; } })();
  if (admission.ok) return { kind: "paid", event, ids, canonical: admission.canonical };
  const errors = (admission.errors ?? []).map((error: any) => `${error.path} ${error.message}`);
  const reason = errors.length === 0 ? admission.detail : `${admission.detail}: ${errors.join("; ")}`;
  return { kind: "unmapped", key, reason, ids };
}
