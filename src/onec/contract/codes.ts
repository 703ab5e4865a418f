/**
 * The codes 1C's answers carry in `error.code` under contract 3 (1c/README.md, «Что означают ответы»).
 * The emulator, the BSL checks and the gateway's reading of 1C's answers all take them from here.
 */

/** A 422 refusal, one code per known cause: the same bytes would be refused again, so it is final. */
export const REFUSAL_CODES = [
  "UNKNOWN_SKU",
  "AMBIGUOUS_SKU",
  "ORDER_NOT_VALID",
  "CUSTOMER_NOT_CLIENT",
  "SETTLEMENT_BY_INVOICES",
  "ACCESS_DENIED",
  "PERIOD_CLOSED",
  "SETTING_MISSING",
  "SETTING_CONFLICT",
  "CURRENCY_MISMATCH",
  "EXTENSION_SAFE_MODE",
] as const;

/** 500: an error 1C could not classify, rolled back. Retried within ONEC_ERROR_ATTEMPTS, then final. */
export const PROCESSING_ERROR = "PROCESSING_ERROR";
