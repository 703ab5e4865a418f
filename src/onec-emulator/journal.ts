import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import type { Booking } from "./order-event.ts";
import type { EmulatorOrder } from "./store.ts";

/**
 * An append-only file of created orders, one JSON line each, so the emulator's
 * orders survive its own `kill -9` as a real 1C's would. Each line is written
 * with one synchronous write(2) before the order is answered: once the caller
 * could have seen the order, the kernel holds it. (No fsync: this guards
 * against the process dying, not the machine.)
 */
export interface OrderJournal {
  /** The orders read back at open, in creation order. */
  readonly restored: readonly EmulatorOrder[];
  append(order: EmulatorOrder): void;
  /** Empties the file: the emulator's reset forgets every order, so a restart must not bring them back. */
  clear(): void;
  close(): void;
}

export function openOrderJournal(path: string): OrderJournal {
  const { orders, goodBytes, totalBytes } = readJournal(path);
  // "a": every write lands at the end, whatever the offset; "r+" would not create the file.
  const fd = openSync(path, "a");
  // A torn last line (killed mid-write) is cut off; appending after it would glue the next order onto it.
  if (goodBytes < totalBytes) ftruncateSync(fd, goodBytes);
  let closed = false;
  return {
    restored: orders,
    append(order) {
      writeSync(fd, `${JSON.stringify(order)}\n`);
    },
    clear() {
      ftruncateSync(fd, 0);
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

interface JournalContents {
  orders: EmulatorOrder[];
  /** Bytes up to the end of the last whole, well-formed line. */
  goodBytes: number;
  totalBytes: number;
}

/** A missing file is an empty journal; a bad line before the last one is corruption and refused. */
export function readJournal(path: string): JournalContents {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { orders: [], goodBytes: 0, totalBytes: 0 };
    throw error;
  }
  const orders: EmulatorOrder[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const end = bytes.indexOf(0x0a, offset);
    const line = bytes.subarray(offset, end === -1 ? bytes.length : end).toString("utf8");
    const order = end === -1 ? undefined : parseOrder(line);
    if (order === undefined) {
      const isLast = end === -1 || end === bytes.length - 1;
      if (!isLast) throw new Error(`order journal ${path}: line ${orders.length + 1} is not an order`);
      break;
    }
    orders.push(order);
    offset = end + 1;
  }
  return { orders, goodBytes: offset, totalBytes: bytes.length };
}

function parseOrder(line: string): EmulatorOrder | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { key, hash, order, correlationId, createdAt, booking } = value as Record<string, unknown>;
  if (typeof key !== "string" || typeof hash !== "string") return undefined;
  if (typeof correlationId !== "string" || typeof createdAt !== "string") return undefined;
  if (typeof order !== "object" || order === null) return undefined;
  const { id, number } = order as Record<string, unknown>;
  if (typeof id !== "string" || typeof number !== "string") return undefined;
  const booked = bookingOf(booking);
  return {
    key,
    hash,
    order: { id, number },
    correlationId,
    createdAt,
    ...(booked === undefined ? {} : { booking: booked }),
  };
}

/** The lines and money an order was booked with; absent in lines written before the emulator kept them. */
function bookingOf(value: unknown): Booking | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { lines, deliveryPrice, total, tax, currency } = value as Record<string, unknown>;
  if (!Array.isArray(lines)) return undefined;
  const textOrNull = (field: unknown) => (typeof field === "string" ? field : null);
  return {
    lines: lines.map((line: { sku?: unknown; quantity?: unknown; price?: unknown }) => ({
      sku: String(line.sku),
      quantity: Number(line.quantity),
      price: String(line.price),
    })),
    deliveryPrice: textOrNull(deliveryPrice),
    total: textOrNull(total),
    tax: textOrNull(tax),
    currency: textOrNull(currency),
  };
}
