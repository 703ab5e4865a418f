/**
 * The years 1C's Date type holds (0001-01-01 to 3999-12-31). A date outside them fails an order on
 * every attempt, so the gateway refuses such an event first and 1C refuses it as malformed (contract
 * 3): both read the year as written, the first four digits of the ISO 8601 date-time.
 */
export const ONEC_MIN_YEAR = 1;
export const ONEC_MAX_YEAR = 3999;

export function isWithinOnecDateRange(timestamp: string): boolean {
  const year = /^(\d{4})-/.exec(timestamp)?.[1];
  return year !== undefined && Number(year) >= ONEC_MIN_YEAR && Number(year) <= ONEC_MAX_YEAR;
}
