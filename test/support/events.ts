import { readFileSync } from "node:fs";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";

const exampleUrl = new URL("../../schemas/examples/order-paid.json", import.meta.url);
const example = JSON.parse(readFileSync(exampleUrl, "utf8")) as OrderPaidEvent;

let counter = 0;

/** The shared example event under a fresh event_id, with optional changes. */
export function orderPaidEvent(mutate?: (event: OrderPaidEvent) => void): OrderPaidEvent {
  const event = structuredClone(example);
  counter += 1;
  event.event_id = `evt-test-${process.pid}-${Date.now()}-${counter}`;
  mutate?.(event);
  return event;
}

export function exampleEvent(): OrderPaidEvent {
  return structuredClone(example);
}
