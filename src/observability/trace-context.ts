/**
 * W3C Trace Context (the Recommendation's `traceparent` and `tracestate`
 * headers), read strictly and without the OpenTelemetry SDK: the accept
 * path reads the headers whether tracing is on or off, and an event carries
 * them to its delivery attempts through the register.
 *
 * A header that breaks the format is ignored, never refused: the request
 * goes on as if it had come without one, and starts a new trace when tracing
 * is on. A bad `tracestate` is dropped on its own; `tracestate` without a
 * valid `traceparent` means nothing and is dropped too.
 */
export interface TraceContext {
  /** Always version 00 as sent on: `00-<trace-id>-<parent-id>-<trace-flags>`. */
  traceparent: string;
  /** The vendors' list as received (list members joined by ","), when there was a valid one. */
  tracestate?: string;
}

/** Request headers as Node gives them, lowercase names. */
export type TraceHeaders = { readonly [name: string]: string | string[] | undefined };

/** Version 00 exactly: lowercase hex only, 55 characters. */
const TRACEPARENT_V00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version: its first four fields as version 00 spells them, then the end or a dash (W3C §3.2.4). */
const TRACEPARENT_LATER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_PARENT_ID = "0".repeat(16);

/** The Recommendation's list-member key: simple, or multi-tenant `tenant@system`. */
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})$/;
/** Printable ASCII but "," and "=", up to 256 characters, not ending in a space. */
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX_MEMBERS = 32;

/**
 * The trace context a request came with, or undefined when it has none or its
 * `traceparent` breaks the format. Node joins repeated headers with ", ": two
 * `traceparent`s fail the format, as they must; two `tracestate`s are one
 * list, as HTTP combines them.
 */
export function readTraceContext(headers: TraceHeaders): TraceContext | undefined {
  const header = headers.traceparent;
  if (header === undefined) return undefined;
  const traceparent = typeof header === "string" ? validTraceparent(header) : undefined;
  if (traceparent === undefined) return undefined;
  const state = headers.tracestate;
  const tracestate = typeof state === "string" ? validTracestate(state) : undefined;
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

/** The header as version 00 sends it on, or undefined when it breaks the format. */
export function validTraceparent(header: string): string | undefined {
  const v00 = TRACEPARENT_V00.exec(header);
  if (v00 !== null) return validIds(v00[1], v00[2]) ? header : undefined;
  // A later version is read by its version-00 prefix; "ff" is forbidden, and "00" must match exactly.
  const later = TRACEPARENT_LATER.exec(header);
  if (later === null || later[1] === "ff" || later[1] === "00" || !validIds(later[2], later[3])) return undefined;
  // Of a later version's flags, only the sampled bit is known.
  const sampled = Number.parseInt(later[4] ?? "00", 16) & 1;
  return `00-${later[2]}-${later[3]}-0${sampled}`;
}

function validIds(traceId: string | undefined, parentId: string | undefined): boolean {
  return traceId !== ZERO_TRACE_ID && parentId !== ZERO_PARENT_ID;
}

/**
 * The list, its empty members left out, or undefined when any member breaks
 * the format, a key repeats, or there are more than 32: the Recommendation
 * lets a vendor drop the whole header then, and one rule is easier to reason
 * about than repairs.
 */
export function validTracestate(header: string): string | undefined {
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of header.split(",")) {
    const member = raw.trim();
    if (member === "") continue;
    const equals = member.indexOf("=");
    if (equals <= 0) return undefined;
    const key = member.slice(0, equals);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(equals + 1)) || keys.has(key))
      return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  return members.join(",");
}

/** The trace id of a valid `traceparent`: what log lines carry as `trace_id`. */
export function traceIdOf(context: TraceContext): string {
  return context.traceparent.slice(3, 35);
}

/** The span id a `traceparent` names as the parent of whatever continues it. */
export function parentIdOf(context: TraceContext): string {
  return context.traceparent.slice(36, 52);
}

/** Whether the trace was sampled upstream (trace-flags bit 0). */
export function sampledIn(context: TraceContext): boolean {
  return (Number.parseInt(context.traceparent.slice(53, 55), 16) & 1) === 1;
}

/**
 * The register's inbound_events.trace_context: the context as JSON
 * (`{"traceparent":…,"tracestate":…}`), readable in SQL and in an export.
 */
export function storedTraceContext(context: TraceContext): string {
  return JSON.stringify(context);
}

/**
 * A stored context read back, checked again as if it had just come in: a row
 * imported from elsewhere or edited by hand continues no trace it cannot name.
 */
export function readStoredTraceContext(stored: string | null | undefined): TraceContext | undefined {
  if (stored === null || stored === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { traceparent, tracestate } = value as Record<string, unknown>;
  if (typeof traceparent !== "string") return undefined;
  return readTraceContext({ traceparent, ...(typeof tracestate === "string" ? { tracestate } : {}) });
}
