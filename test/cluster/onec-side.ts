import { readJournal } from "../../src/onec-emulator/journal.ts";
import { onecOrders } from "../soak/onec-control.ts";

/** One event as 1C saw it: its orders in the running emulator and in its journal, and the order's id. */
export interface OnecAccount {
  orders: number;
  journalled: number;
  orderId: string | undefined;
}

/**
 * What 1C holds for each key, from both of its records: the emulator's live
 * store (GET /_emulator/orders) and the journal it writes before answering.
 */
export async function onecAccounts(
  onecUrl: string,
  journal: string,
  keys: readonly string[],
): Promise<Map<string, OnecAccount>> {
  const live = await onecOrders(onecUrl);
  const written = readJournal(journal).orders;
  const accounts = new Map<string, OnecAccount>(
    keys.map((key) => [key, { orders: 0, journalled: 0, orderId: undefined }]),
  );
  for (const order of live) {
    const account = accounts.get(order.key);
    if (account === undefined) continue;
    account.orders += 1;
    account.orderId = order.order.id;
  }
  for (const order of written) {
    const account = accounts.get(order.key);
    if (account !== undefined) account.journalled += 1;
  }
  return accounts;
}
