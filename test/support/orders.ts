import type { EmulatorOrder, OnecEmulator } from "../../src/onec-emulator/emulator.ts";

/**
 * Resolves once the emulator holds an order for every key: the event a test
 * waits on instead of sleeping. Orders already there count.
 */
export function ordersFor(onec: OnecEmulator, keys: Iterable<string>): Promise<void> {
  const wanted = new Set(keys);
  return new Promise((resolve) => {
    const check = () => {
      const held = new Set(onec.orders().map((order) => order.key));
      if ([...wanted].every((key) => held.has(key))) {
        onec.events.off("committed", onCommitted);
        resolve();
      }
    };
    const onCommitted = (order: EmulatorOrder) => {
      if (wanted.has(order.key)) check();
    };
    onec.events.on("committed", onCommitted);
    check();
  });
}

/** How many orders the emulator holds for a key: exactly one is the whole point. */
export function ordersOf(onec: OnecEmulator, key: string): number {
  return onec.orders().filter((order) => order.key === key).length;
}
