/**
 * The years 1C's Date type holds (0001-01-01 to 3999-12-31). A date outside them fails an order on
 * every attempt, so the gateway refuses such an event first and 1C refuses it as malformed (contract
 * 3): both read the year as written, the first four digits of the ISO 8601 date-time.
 */
export const ONEC_MIN_YEAR = 1;
export const ONEC_MAX_YEAR = 3999;

export function isWithinOnecDateRange(timestamp: string): boolean {
  // Four ASCII digits and a hyphen, read without a regular expression's match array: it runs on every event.
  if (timestamp.charCodeAt(4) !== 0x2d /* - */) return false;
  let year = 0;
  for (let i = 0; i < 4; i++) {
    const digit = timestamp.charCodeAt(i) - 0x30;
    if (!(digit >= 0 && digit <= 9)) return false;
    year = year * 10 + digit;
  }
  return year >= ONEC_MIN_YEAR && year <= ONEC_MAX_YEAR;
}
