/**
 * The values operators type, in environment variables and command-line
 * flags alike: one rule per kind, so `PORT=abc` and `--limit abc` are judged
 * the same way. Each returns the value or throws InvalidValue with a message
 * that names what was given; callers wrap it in their own error kind.
 */
export class InvalidValue extends Error {
  override readonly name = "InvalidValue";
}

/** Digits only (no sign, no fraction, no exponent), within [min, max]. */
export function wholeNumber(label: string, raw: string, min: number, max: number): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new InvalidValue(`${label} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** An absolute http: or https: URL, returned as given. */
export function httpUrl(label: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidValue(`${label} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidValue(`${label} must be an http(s) URL, got "${raw}"`);
  }
  return raw;
}
