import type { Refusal } from "./store.ts";

/** Failure modes a test can switch on at runtime to see how the gateway copes with a misbehaving 1C. */
export interface EmulatorFaults {
  /** Wait this long before handling each POST. */
  latencyMs: number;
  /** Answer every POST 503 with Retry-After, touching nothing. */
  unavailable: boolean;
  /** Retry-After value, in seconds, for the 503. */
  retryAfterSeconds: number;
  /** Commit the order, then never answer: the "did 1C get it?" case that idempotency must cover. */
  hangAfterCommit: boolean;
  /** Destroy the socket without answering and without storing anything. */
  dropConnection: boolean;
  /** null means every SKU is known. */
  knownSkus: string[] | null;
  /** 1C's maintenance switch: POST and GET /v1/health answer 503 MAINTENANCE with Retry-After. */
  maintenance: boolean;
  /**
   * 1C's configuration refuses to post the order (fill check, status, automatic discounts): a new
   * key gets 422 ORDER_NOT_VALID with this text, nothing is stored. null: orders post.
   */
  orderNotValid: string | null;
  /**
   * 1C refuses a new key for a reason of its own (any of contract 3's REFUSAL_CODES, src/onec/contract/codes.ts):
   * 422 with this code and text.
   */
  refusal: Refusal | null;
  /** 1C fails on a new key with an error it cannot classify: 500 PROCESSING_ERROR with this text. */
  processingError: string | null;
  /**
   * The currency (ISO 4217 alphabetic code) of the agreement 1C's order takes its sale terms from. 1C books the
   * site's prices as they are, so a new key whose `order.currency` is another one is refused 422
   * CURRENCY_MISMATCH, nothing stored (currency.ts). null: the agreement is in the event's currency, except XTS,
   * the code ISO 4217 reserves for tests, which no agreement is in: an event in XTS is always refused, as a real
   * base refuses it (the contract's case currency-of-no-agreement).
   */
  agreementCurrency: string | null;
  /**
   * How long 1C posts the order inside the transaction that holds the key's exclusive lock: a GET of
   * the key meanwhile waits for its commit (key-locks.ts), and another POST of it waits its turn.
   */
  postingMs: number;
  /** 1C's managed-lock timeout: a GET that waited this long answers 503 UNAVAILABLE. */
  lockWaitMs: number;
}

export function defaultFaults(): EmulatorFaults {
  return {
    latencyMs: 0,
    unavailable: false,
    retryAfterSeconds: 1,
    hangAfterCommit: false,
    dropConnection: false,
    knownSkus: null,
    maintenance: false,
    orderNotValid: null,
    refusal: null,
    processingError: null,
    agreementCurrency: null,
    postingMs: 0,
    // 1C's default wait for a managed lock.
    lockWaitMs: 20_000,
  };
}

/** Copies arrays so a caller keeping its own reference cannot change the faults behind our back. */
export function applyFaults(current: EmulatorFaults, patch: Partial<EmulatorFaults>): EmulatorFaults {
  const next: EmulatorFaults = { ...current };
  if (patch.latencyMs !== undefined) next.latencyMs = patch.latencyMs;
  if (patch.unavailable !== undefined) next.unavailable = patch.unavailable;
  if (patch.retryAfterSeconds !== undefined) next.retryAfterSeconds = patch.retryAfterSeconds;
  if (patch.hangAfterCommit !== undefined) next.hangAfterCommit = patch.hangAfterCommit;
  if (patch.dropConnection !== undefined) next.dropConnection = patch.dropConnection;
  if (patch.knownSkus !== undefined) next.knownSkus = patch.knownSkus === null ? null : [...patch.knownSkus];
  if (patch.maintenance !== undefined) next.maintenance = patch.maintenance;
  if (patch.orderNotValid !== undefined) next.orderNotValid = patch.orderNotValid;
  if (patch.refusal !== undefined) next.refusal = patch.refusal === null ? null : { ...patch.refusal };
  if (patch.processingError !== undefined) next.processingError = patch.processingError;
  if (patch.agreementCurrency !== undefined) next.agreementCurrency = patch.agreementCurrency;
  if (patch.postingMs !== undefined) next.postingMs = patch.postingMs;
  if (patch.lockWaitMs !== undefined) next.lockWaitMs = patch.lockWaitMs;
  return next;
}

export function copyFaults(faults: EmulatorFaults): EmulatorFaults {
  return applyFaults(faults, {});
}

export type FaultsPatchResult = { ok: true; patch: Partial<EmulatorFaults> } | { ok: false; message: string };

/** The control endpoint takes JSON from outside the type system, so every member is checked here. */
export function parseFaultsPatch(input: unknown): FaultsPatchResult {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, message: "faults patch must be a JSON object" };
  }
  const patch: Partial<EmulatorFaults> = {};
  for (const [name, value] of Object.entries(input)) {
    switch (name) {
      case "latencyMs":
      case "retryAfterSeconds":
      case "postingMs":
      case "lockWaitMs":
        if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
          return { ok: false, message: `${name} must be a non-negative integer` };
        }
        patch[name] = value;
        break;
      case "unavailable":
      case "hangAfterCommit":
      case "dropConnection":
      case "maintenance":
        if (typeof value !== "boolean") return { ok: false, message: `${name} must be a boolean` };
        patch[name] = value;
        break;
      case "knownSkus":
        if (value !== null && !(Array.isArray(value) && value.every((sku) => typeof sku === "string"))) {
          return { ok: false, message: "knownSkus must be null or an array of strings" };
        }
        patch.knownSkus = value;
        break;
      case "orderNotValid":
      case "processingError":
        if (value !== null && (typeof value !== "string" || value === "")) {
          return { ok: false, message: `${name} must be null or a non-empty string` };
        }
        patch[name] = value;
        break;
      case "agreementCurrency":
        if (value !== null && (typeof value !== "string" || !/^[A-Z]{3}$/.test(value))) {
          return { ok: false, message: "agreementCurrency must be null or an ISO 4217 code of three capital letters" };
        }
        patch.agreementCurrency = value;
        break;
      case "refusal": {
        const refusal = parseRefusal(value);
        if (refusal === undefined) {
          return { ok: false, message: "refusal must be null or {code: UPPER_SNAKE_CASE, message: non-empty string}" };
        }
        patch.refusal = refusal;
        break;
      }
      default:
        return { ok: false, message: `unknown fault: ${name}` };
    }
  }
  return { ok: true, patch };
}

function parseRefusal(value: unknown): Refusal | null | undefined {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return undefined;
  const { code, message, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof code !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(code)) return undefined;
  if (typeof message !== "string" || message === "") return undefined;
  return { code, message };
}
