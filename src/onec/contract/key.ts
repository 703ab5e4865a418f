/**
 * The key 1C deduplicates on (`Idempotency-Key`, and the `{key}` of `GET /v1/events/{key}`).
 *
 * Alphabet: `A-Z a-z 0-9 . _ : ~ -`, 1 to 300 characters, but not `.` or `..` (contract 3): as a path
 * segment those are dot-segments, which clients and web servers remove (RFC 3986 §5.2.4), so the
 * status URL could never reach them. Every one of these characters is a plain path
 * character (RFC 3986 pchar), so the key goes into the URL as it is: no `%`-escape, and no `/`,
 * which Apache refuses encoded (`%2F`) unless `AllowEncodedSlashes` is set per virtual host.
 * 1C refuses any other key on POST (400), so a key that POST accepts is always reachable by GET.
 *
 * The sender `default` sends the bare event id (events in registers were delivered under it).
 * A named sender sends `<sender>~<event_id>`: `~` is in neither the sender alphabet
 * (`A-Z a-z 0-9 . _ -`) nor the event id alphabet (`A-Z a-z 0-9 . _ : -`), so a key with `~`
 * splits back into one (sender, event id) and a key without it is the default sender's: injective.
 * Before contract 2 the separator was `/`; 1C still finds an event delivered under `<sender>/<id>`
 * (see legacyKey).
 */

export const KEY_MAX_LENGTH = 300;
export const KEY_PATTERN = /^[A-Za-z0-9._:~-]{1,300}$/;
export const SENDER_SEPARATOR = "~";
/** The separator of contract 1, kept only to find events delivered before the change. */
export const LEGACY_SENDER_SEPARATOR = "/";

/** A named sender's key. The default sender's key is its bare event id: see onecIdempotencyKey. */
export function namedSenderKey(sender: string, eventId: string): string {
  return `${sender}${SENDER_SEPARATOR}${eventId}`;
}

/** The key the same event had under contract 1 (`<sender>/<id>`); undefined for a default sender's key. */
export function legacyKey(key: string): string | undefined {
  const at = key.indexOf(SENDER_SEPARATOR);
  return at < 0 ? undefined : `${key.slice(0, at)}${LEGACY_SENDER_SEPARATOR}${key.slice(at + 1)}`;
}

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key) && key !== "." && key !== "..";
}

/**
 * The path segment for `GET /v1/events/{key}`: the key itself, since its alphabet needs no escape.
 * A key outside the alphabet (never made by the gateway) is escaped so the URL stays well formed;
 * 1C answers 404 for it, as it could never have accepted it.
 */
export function keyPathSegment(key: string): string {
  return isValidKey(key) ? key : encodeURIComponent(key);
}
