export type SkusResult = { ok: true; skus: string[] } | { ok: false; message: string };

/**
 * The emulator reads only what 1C itself needs to book the order: the lines and
 * their articles. Full schema validation is the gateway's job, not 1C's.
 */
export function readSkus(event: unknown): SkusResult {
  if (!isObject(event) || !isObject(event.order) || !Array.isArray(event.order.items)) {
    return { ok: false, message: "event has no order.items array" };
  }
  const skus: string[] = [];
  for (const [index, item] of event.order.items.entries()) {
    if (!isObject(item) || typeof item.sku !== "string") {
      return { ok: false, message: `order.items[${index}].sku must be a string` };
    }
    skus.push(item.sku);
  }
  return { ok: true, skus };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
