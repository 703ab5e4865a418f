import type { OnecOrder } from "../domain/first-answer.ts";

/**
 * What one POST to 1C came to. A value, not an exception: the deliverer's
 * policy (src/delivery/retry-policy.ts) decides what each kind means.
 */
export type OnecOutcome =
  /** 201: 1C created the order now. 200: 1C had already created it for this key. */
  | { kind: "delivered"; httpStatus: 200 | 201; order: OnecOrder }
  /** 422: 1C refuses the data (unknown article, closed period...). Final. */
  | { kind: "rejected"; httpStatus: number; code: string; message: string }
  /** 409: 1C holds this key with another body. Final. */
  | { kind: "conflict"; httpStatus: 409; message: string }
  /**
   * 500 with 1C's own PROCESSING_ERROR problem: 1C ran the event and failed on an error it could not
   * classify (rolled back, nothing created). Not an outage: retried within a small budget, then final.
   */
  | { kind: "errored"; httpStatus: 500; code: string; message: string }
  /** 401/403: our credentials are wrong. Retrying helps only after an operator fixes them. */
  | { kind: "unauthorized"; httpStatus: 401 | 403; message: string }
  /** Timeout, network error, 5xx other than PROCESSING_ERROR, 429, or an answer we cannot read. Try again later. */
  | { kind: "retryable"; httpStatus?: number; errorClass: string; message: string; retryAfterMs?: number };

/**
 * What 1C says it holds under an idempotency key (GET /v1/events/{key}).
 * Asked before the gateway gives up on an event whose last call may have
 * reached 1C: only "absent" lets the event end undelivered.
 */
export type OnecEventLookup =
  /** 1C created the order for this key; this is it. */
  | { kind: "found"; httpStatus: 200; order: OnecOrder }
  /** 404 with the contract's NOT_FOUND error: 1C never committed this key. */
  | { kind: "absent"; httpStatus: 404 }
  /** No clear answer (down, timeout, a 404 page that is not 1C's): 1C could not be asked. */
  | { kind: "unknown"; httpStatus?: number; errorClass: string; message: string };
