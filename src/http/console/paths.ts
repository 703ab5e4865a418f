/**
 * Every URL the console links to or posts to, made in one place. An event is
 * (sender, event_id): the same event_id may come from two senders, so both
 * are in its URL, each percent-encoded as a path segment.
 */

export const CONSOLE_PATH = "/console";

export const consolePaths = {
  home: CONSOLE_PATH,
  signIn: `${CONSOLE_PATH}/sign-in`,
  signOut: `${CONSOLE_PATH}/sign-out`,
  search: `${CONSOLE_PATH}/search`,
  bulkReplay: `${CONSOLE_PATH}/bulk-replay`,
  bulkReplayPreview: `${CONSOLE_PATH}/bulk-replay/preview`,
  bulkReplayConfirm: `${CONSOLE_PATH}/bulk-replay/confirm`,
  stylesheet: `${CONSOLE_PATH}/assets/console.css`,
  script: `${CONSOLE_PATH}/assets/console.js`,
  deliveries: `${CONSOLE_PATH}/webhook-deliveries`,
  delivery: (id: number) => `${CONSOLE_PATH}/webhook-deliveries/${id}`,
  remap: (id: number) => `${CONSOLE_PATH}/webhook-deliveries/${id}/remap`,
  event: (sender: string, eventId: string) =>
    `${CONSOLE_PATH}/events/${encodeURIComponent(sender)}/${encodeURIComponent(eventId)}`,
  replay: (sender: string, eventId: string) => `${consolePaths.event(sender, eventId)}/replay`,
  replayConfirm: (sender: string, eventId: string) => `${consolePaths.event(sender, eventId)}/replay/confirm`,
} as const;

/** A path with a query string; empty values are left out, so links stay short. */
export function withQuery(path: string, query: Readonly<Record<string, string | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, value);
  const text = params.toString();
  return text === "" ? path : `${path}?${text}`;
}

/** Resolves relative paths only: a `next` that names any other origin is not ours. */
const OWN_ORIGIN = "http://console.invalid";

/**
 * Where to go after signing in: only a page of the console, as a path that
 * can go in a Location header. Anything else (another host, `//evil`, a
 * backslash trick, dot segments leading out) would make the sign-in page an
 * open redirect, and falls back to the console's home. What stays is
 * percent-encoded as a URL serializes it (`/console/Ж` → `/console/%D0%96`):
 * Node refuses a raw non-ASCII Location with ERR_INVALID_CHAR.
 */
export function safeNextPath(next: string | undefined): string {
  if (next === undefined || !next.startsWith("/") || /[\\\s]|\/\//.test(next)) return CONSOLE_PATH;
  const url = URL.parse(next, OWN_ORIGIN);
  if (url === null || url.origin !== OWN_ORIGIN || !isConsolePage(url.pathname)) return CONSOLE_PATH;
  return `${url.pathname}${url.search}`;
}

function isConsolePage(pathname: string): boolean {
  return (
    (pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`)) && !pathname.startsWith(consolePaths.signIn)
  );
}
