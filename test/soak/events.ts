import { readFileSync } from "node:fs";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import type { Prng } from "./prng.ts";

const EXAMPLE = new URL("../../schemas/examples/order-paid.json", import.meta.url);

/** One business event of the shop: its bytes are made once and sent unchanged on every retry. */
export interface SoakEvent {
  readonly index: number;
  readonly eventId: string;
  readonly bytes: Buffer;
}

const CATALOGUE = [
  { sku: "TEA-001", name: "Чай улун, 100 г", price: 45_000 },
  { sku: "MUG-010", name: "Кружка керамическая", price: 69_000 },
  { sku: "POT-020", name: "Чайник глиняный", price: 249_000 },
  { sku: "CUP-007", name: "Пиала", price: 15_050 },
] as const;

/**
 * Valid events built from the shared example, so each passes the gateway's
 * schema and business rules (exact sums in minor units), with seeded
 * variations in the lines and the delivery so they are not all one body.
 */
export function soakEvents(count: number, seed: number, prng: Prng): SoakEvent[] {
  const example = JSON.parse(readFileSync(EXAMPLE, "utf8")) as OrderPaidEvent;
  return Array.from({ length: count }, (_, i) => {
    const event = structuredClone(example);
    const eventId = `soak-${seed}-${i + 1}`;
    event.event_id = eventId;
    const lines = prng.shuffle(CATALOGUE).slice(0, prng.int(1, 3));
    const items = lines.map((line) => ({
      sku: line.sku,
      name: line.name,
      quantity: prng.int(1, 4),
      price: line.price,
    }));
    const delivery = prng.next() < 0.5 ? 0 : 30_000;
    const total = items.reduce((sum, item) => sum + item.quantity * item.price, 0) + delivery;
    event.order.id = `S-${seed}-${i + 1}`;
    event.order.number = String(100_000 + i);
    event.order.items = items.map((item) => ({ ...item, price: money(item.price) }));
    if (delivery === 0) delete event.order.delivery;
    else if (event.order.delivery !== undefined) event.order.delivery.price = money(delivery);
    event.order.total = money(total);
    event.payment.amount = money(total);
    event.payment.id = `pay-${seed}-${i + 1}`;
    return { index: i, eventId, bytes: Buffer.from(JSON.stringify(event), "utf8") };
  });
}

function money(minor: number): string {
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, "0")}`;
}
