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
        if (value !== null && (typeof value !== "string" || value === "")) {
          return { ok: false, message: "orderNotValid must be null or a non-empty string" };
        }
        patch.orderNotValid = value;
        break;
      default:
        return { ok: false, message: `unknown fault: ${name}` };
    }
  }
  return { ok: true, patch };
}
