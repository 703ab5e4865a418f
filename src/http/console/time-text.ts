/**
 * Times as support reads and types them. The register keeps epoch
 * milliseconds; the console shows and takes UTC, said on every label, so two
 * people in different time zones read the same time off the same page.
 */

/** `2026-11-30 10:00:05 UTC` */
export function utcText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/**
 * A value for `<input type="datetime-local" step="1">`, read back as UTC by
 * `parseUtcInput`: milliseconds kept when there are any, so a filter carried
 * from page to page stays the same filter.
 */
export function utcInputValue(ms: number | undefined): string {
  return ms === undefined ? "" : new Date(ms).toISOString().slice(0, ms % 1000 === 0 ? 19 : 23);
}

/** `45 s`, `4 min`, `2 h 5 min`, `3 d 2 h`: how long something has waited, to the unit that matters. */
export function ageText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/**
 * What a browser's datetime-local input sends (`2026-11-30T10:00`, with
 * `:05` or `:05.250` when seconds are set), or a date alone, read as UTC; an
 * ISO 8601 time with `Z` or an offset is taken as written. Anything else,
 * including dates that do not exist (`2026-02-30`), is undefined.
 */
export function parseUtcInput(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?(Z|[+-]\d{2}:\d{2})?$/.exec(
    text.trim(),
  );
  if (match === null) return undefined;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "", zone] = match;
  if (zone !== undefined && match[4] === undefined) return undefined;
  const ms = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}${zone ?? "Z"}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March: a date that does not exist is refused, not moved.
  const written = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (written.getUTCMonth() !== Number(month) - 1 || written.getUTCDate() !== Number(day)) return undefined;
  return ms;
}
