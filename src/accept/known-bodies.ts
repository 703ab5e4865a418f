import { hash } from "node:crypto";
import type { SiteOrderKeys } from "../domain/order-paid.ts";

/** What admitting a body's bytes came to, all a repeat of those bytes needs. */
export interface AdmittedFacts {
  eventId: string;
  fingerprint: string;
  policy: string;
  siteOrder: SiteOrderKeys;
}

/**
 * Bodies this process has admitted, by the SHA-256 of their bytes. A sender
 * repeating an event repeats its bytes; those bytes were parsed, validated
 * and canonicalised once, and the answer to a repeat depends on nothing but
 * the facts kept here and the register's row. So a repeat costs a hash of
 * its bytes (a microsecond and a half for an order) instead of the parse,
 * the schema, the rules and the canonical form (some 30 µs).
 *
 * Admission is a pure function of the bytes (no clock, no configuration), so
 * a remembered admission never goes stale. The register is still read for
 * every request: the memory holds no answer, and a status changed by
 * another process is seen at once. Bounded: only bodies that passed
 * admission are kept, at about 200 bytes each, and the oldest are dropped
 * first, half of the capacity at a time (see remember).
 */
export class KnownBodies<Facts = AdmittedFacts> {
  readonly #generationSize: number;
  #recent = new Map<string, Facts>();
  #older = new Map<string, Facts>();

  constructor(capacity = DEFAULT_CAPACITY) {
    // Two generations of ceil(capacity / 2): never more than the capacity in all, never fewer than half of it.
    this.#generationSize = Math.ceil(Math.max(0, capacity) / 2);
  }

  recall(digest: string): Facts | undefined {
    return this.#recent.get(digest) ?? this.#older.get(digest);
  }

  /**
   * Dropping the oldest entry one at a time cost 7.6 µs per new body at
   * capacity: V8 keeps a Map's deleted entries as holes until it rehashes,
   * and `keys().next()` walks past every one of them. Swapping whole
   * generations costs nothing per body.
   */
  remember(digest: string, facts: Facts): void {
    if (this.#generationSize === 0) return;
    this.#recent.set(digest, facts);
    if (this.#recent.size >= this.#generationSize) {
      this.#older = this.#recent;
      this.#recent = new Map();
    }
  }

  get size(): number {
    return this.#recent.size + this.#older.size;
  }
}

/** A body's identity: SHA-256 over its bytes as received, before anything reads them. */
export function bodyDigest(raw: Uint8Array): string {
  return hash("sha256", raw, "base64url");
}

/** 10 000 bodies, about 2 MB: an hour of repeats at a busy shop's pace, and nothing next to the process. */
const DEFAULT_CAPACITY = 10_000;
