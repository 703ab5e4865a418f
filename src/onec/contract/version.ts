/**
 * The version of the HTTP contract with 1C that this gateway speaks. 1C's extension reports its own in
 * `GET /v1/health` (`contract_version`) and in the `X-Contract-Version` header; `gateway probe` checks
 * that they agree (the `health` case of 1c/contract/cases.json).
 *
 * 2: keys of A-Z a-z 0-9 . _ : ~ - only (a named sender's key is `<sender>~<event_id>`), `GET /v1/health`,
 * 503 `MAINTENANCE` with `Retry-After`, 422 `ORDER_NOT_VALID`, 400 `BAD_IDEMPOTENCY_KEY`.
 *
 * 3: an error 1C cannot classify is 500 `PROCESSING_ERROR` (an RFC 9457 problem that also carries
 * `error`), not 503; 503 only for maintenance and lock conflicts; a 422 code per known cause
 * (codes.ts); keys `.` and `..` and dates outside the years 1-3999 refused with 400;
 * `GET /v1/health` lists misconfigurations in `problems`.
 */
export const CONTRACT_VERSION = "3";
