import { type Canonical, canonicalizeEvent } from "../domain/fingerprint.ts";
import { type SiteOrderKeys, siteOrderKeys } from "../domain/order-paid.ts";
import { type Admission, admitOrderPaid, checkIdempotencyKey } from "./admit-order-paid.ts";
import { type AdmittedFacts, bodyDigest, KnownBodies } from "./known-bodies.ts";
import { readJsonBody } from "./read-json-body.ts";

/**
 * A body admitted: its event_id, its canonical form (read lazily when the bytes were recognised), and
 * whether they were (bytes never admitted here are most likely a new event).
 */
export type Intake =
  | { ok: true; eventId: string; canonical: Canonical; siteOrder: SiteOrderKeys; recognised: boolean }
  | Extract<Admission, { ok: false }>;

export interface IntakeOptions {
  /** How many admitted bodies are remembered (0: none, every request is read in full). */
  knownBodies?: number;
  /** The canonical form; a test passes its own to count the calls. */
  canonicalize?: (value: unknown) => Canonical;
}

/**
 * The order-paid body from its bytes to an admission, in one pure pipeline:
 * the bytes' digest; for bytes already admitted, only the Idempotency-Key
 * check; otherwise UTF-8, the strict parse, admitOrderPaid (the key, the
 * schema, the rules) and the canonical form, remembered when admitted.
 */
export class OrderPaidIntake {
  readonly #known: KnownBodies;
  readonly #canonicalize: (value: unknown) => Canonical;

  constructor(options: IntakeOptions = {}) {
    this.#known = new KnownBodies(options.knownBodies);
    this.#canonicalize = options.canonicalize ?? canonicalizeEvent;
  }

  admit(raw: Uint8Array, idempotencyKeyHeader: string | string[] | undefined): Intake {
    const digest = bodyDigest(raw);
    const known = this.#known.recall(digest);
    if (known !== undefined) {
      const keyRefusal = checkIdempotencyKey(idempotencyKeyHeader, known.eventId);
      if (keyRefusal !== undefined) return keyRefusal;
      const canonical = new RecalledCanonical(known, () => this.#read(raw));
      return { ok: true, eventId: known.eventId, canonical, siteOrder: known.siteOrder, recognised: true };
    }
    const admission = this.#read(raw, idempotencyKeyHeader);
    if (admission.ok) {
      const { canonical } = admission;
      this.#known.remember(digest, {
        eventId: admission.eventId,
        fingerprint: canonical.fingerprint,
        policy: canonical.policy,
        siteOrder: admission.siteOrder,
      });
    }
    return admission;
  }

  #read(raw: Uint8Array, idempotencyKeyHeader?: string | string[]): Intake {
    const read = readJsonBody(raw);
    if (!read.ok) return read;
    const admission = admitOrderPaid(read.value, idempotencyKeyHeader, read.decimalNumbers, this.#canonicalize);
    if (!admission.ok) return admission;
    const { event, canonical } = admission;
    return { ok: true, eventId: event.event_id, canonical, siteOrder: siteOrderKeys(event), recognised: false };
  }
}

/**
 * The canonical form of recognised bytes: the fingerprint as remembered; the
 * text only if asked for (a new event's reservation, a row recorded under
 * another fingerprint policy), read again from the bytes then.
 */
class RecalledCanonical implements Canonical {
  readonly fingerprint: string;
  readonly policy: string;
  readonly #readAgain: () => Intake;
  #text: string | undefined;

  constructor(facts: AdmittedFacts, readAgain: () => Intake) {
    this.fingerprint = facts.fingerprint;
    this.policy = facts.policy;
    this.#readAgain = readAgain;
  }

  get text(): string {
    if (this.#text === undefined) {
      const again = this.#readAgain();
      // The same bytes under the same rules: anything else is a broken invariant, not bad input.
      if (!again.ok || again.canonical.fingerprint !== this.fingerprint) {
        throw new Error("remembered body no longer admits to the same fingerprint");
      }
      this.#text = again.canonical.text;
    }
    return this.#text;
  }
}
