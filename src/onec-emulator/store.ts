import { randomUUID } from "node:crypto";
import { legacyKey } from "../onec/contract/key.ts";
import type { Booking } from "./order-event.ts";

export interface EmulatorOrder {
  key: string;
  hash: string;
  order: { id: string; number: string };
  correlationId: string;
  createdAt: string;
  /** The lines and money booked; absent in a journal written before the emulator kept them. */
  booking?: Booking;
}

export interface Submission {
  key: string;
  /** sha256 of the raw body: a resend must be byte-identical to count as the same event. */
  hash: string;
  correlationId: string;
  skus: readonly string[];
  booking?: Booking;
}

export type SubmitResult =
  | { kind: "created"; record: EmulatorOrder }
  | { kind: "replayed"; record: EmulatorOrder }
  | { kind: "conflict"; record: EmulatorOrder }
  /** 1C holds a key that differs from this one only in letter case: one record for both. */
  | { kind: "case_conflict"; record: EmulatorOrder }
  | { kind: "unknown_sku"; sku: string }
  | { kind: "refused"; refusal: Refusal }
  | { kind: "failed"; message: string };

/** A 422 1C gives for a reason of its own (a setting, the customer, a right): code and user messages. */
export interface Refusal {
  code: string;
  message: string;
}

/** What 1C's base would do with a new key besides the articles: refuse it, or fail on it. */
export interface NewKeyOutcome {
  refusal: Refusal | null;
  /** 1C fails on an error it cannot classify: 500 PROCESSING_ERROR with this text, nothing stored. */
  failure: string | null;
}

export interface OrderStoreOptions {
  newId?: () => string;
  now?: () => Date;
  /**
   * Makes a new order durable before it exists for anyone: if it throws, the
   * order is not created and the caller gets the error instead of an answer.
   */
  persist?: (record: EmulatorOrder) => void;
}

/**
 * What 1C keeps per idempotency key. Synchronous on purpose: check-and-insert
 * runs in one tick, so concurrent requests with one key cannot both create.
 */
export class OrderStore {
  /** By the key in lower case: 1C compares its register's keys without regard to case. */
  readonly #byKey = new Map<string, EmulatorOrder>();
  readonly #newId: () => string;
  readonly #now: () => Date;
  readonly #persist: ((record: EmulatorOrder) => void) | undefined;
  #sequence = 0;

  constructor(options: OrderStoreOptions = {}) {
    this.#newId = options.newId ?? randomUUID;
    this.#now = options.now ?? (() => new Date());
    this.#persist = options.persist;
  }

  /**
   * Loads orders kept from an earlier life (the journal), in creation order.
   * The sequence continues after the highest number seen, so a restart never
   * hands out an order number twice.
   */
  restore(records: Iterable<EmulatorOrder>): void {
    for (const record of records) {
      this.#byKey.set(folded(record.key), copy(record));
      const number = /^ORD-(\d+)$/.exec(record.order.number)?.[1];
      if (number !== undefined) this.#sequence = Math.max(this.#sequence, Number(number));
    }
  }

  /**
   * A known key is judged before the SKUs, so a replay succeeds even if the catalogue changed since.
   * A refusal or a failure is 1C's base turning a new key down: like an unknown SKU, nothing is
   * stored, so the key is tried anew next time (a REJECTED or FAILED key never answers 409).
   */
  submit(
    submission: Submission,
    knownSkus: readonly string[] | null,
    newKey: NewKeyOutcome = { refusal: null, failure: null },
  ): SubmitResult {
    const existing = this.#find(submission.key);
    if (existing !== undefined && !isRecordOf(existing, submission.key)) {
      return { kind: "case_conflict", record: copy(existing) };
    }
    if (existing !== undefined) {
      return { kind: existing.hash === submission.hash ? "replayed" : "conflict", record: copy(existing) };
    }
    if (knownSkus !== null) {
      const known = new Set(knownSkus);
      const unknown = submission.skus.find((sku) => !known.has(sku));
      if (unknown !== undefined) return { kind: "unknown_sku", sku: unknown };
    }
    if (newKey.refusal !== null) return { kind: "refused", refusal: { ...newKey.refusal } };
    if (newKey.failure !== null) return { kind: "failed", message: newKey.failure };
    this.#sequence += 1;
    const record: EmulatorOrder = {
      key: submission.key,
      hash: submission.hash,
      order: { id: this.#newId(), number: `ORD-${String(this.#sequence).padStart(6, "0")}` },
      correlationId: submission.correlationId,
      createdAt: this.#now().toISOString(),
      ...(submission.booking === undefined ? {} : { booking: submission.booking }),
    };
    try {
      this.#persist?.(record);
    } catch (error) {
      this.#sequence -= 1;
      throw error;
    }
    this.#byKey.set(folded(record.key), record);
    return { kind: "created", record: copy(record) };
  }

  /** By key, or by the key the same event had under contract 1 (`<sender>/<id>` for `<sender>~<id>`). */
  get(key: string): EmulatorOrder | undefined {
    const record = this.#find(key);
    // Another key's record (the same but for letter case) is not this event's order.
    return record === undefined || !isRecordOf(record, key) ? undefined : copy(record);
  }

  /** Map iteration follows insertion, which is creation order. */
  all(): EmulatorOrder[] {
    return [...this.#byKey.values()].map(copy);
  }

  #find(key: string): EmulatorOrder | undefined {
    const legacy = legacyKey(key);
    return this.#byKey.get(folded(key)) ?? (legacy === undefined ? undefined : this.#byKey.get(folded(legacy)));
  }

  clear(): void {
    this.#byKey.clear();
    this.#sequence = 0;
  }
}

/** Callers get copies so a test poking at a result cannot rewrite history. */
function copy(record: EmulatorOrder): EmulatorOrder {
  const booking =
    record.booking === undefined
      ? {}
      : { booking: { ...record.booking, lines: record.booking.lines.map((line) => ({ ...line })) } };
  return { ...record, order: { ...record.order }, ...booking };
}

function folded(key: string): string {
  return key.toLowerCase();
}

/** The record is this key's, or its contract-1 key's, letter for letter. */
function isRecordOf(record: EmulatorOrder, key: string): boolean {
  return record.key === key || record.key === legacyKey(key);
}
