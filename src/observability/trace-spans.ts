import type { EventRecord, EventRegister, ReserveRequest, ReserveResult } from "../register/port.ts";
import {
  readStoredTraceContext,
  readTraceContext,
  storedTraceContext,
  type TraceContext,
  type TraceHeaders,
  traceIdOf,
} from "./trace-context.ts";
import { activeTracing, type SpanAttributes, type TracedSpan } from "./tracing.ts";

/**
 * The three places a trace passes through, each a function that costs only
 * a header read (or a null check) when tracing is off: the request, the
 * register's reserve, and a delivery attempt.
 */

/** The context a request runs under, and its server span when tracing is on. */
export interface RequestTrace {
  /** What the request's event is stored with: the server span's context, or the shop's own when tracing is off. */
  context: TraceContext;
  span: TracedSpan | undefined;
}

/**
 * From the request's headers: with tracing off, the shop's context as it
 * came (or none); with it on, a server span, the child of that context or
 * the root of a new trace when there was none or it broke the format.
 */
export function startRequestTrace(
  headers: TraceHeaders,
  method: string,
  route: string | undefined,
): RequestTrace | undefined {
  const incoming = readTraceContext(headers);
  const tracing = activeTracing();
  if (tracing === undefined) return incoming === undefined ? undefined : { context: incoming, span: undefined };
  const span = tracing.startSpan(route === undefined ? method : `${method} ${route}`, "server", incoming, {
    "http.request.method": method,
    "http.route": route,
  });
  return { context: span.context, span };
}

export function endRequestTrace(trace: RequestTrace, status: number): void {
  if (trace.span === undefined) return;
  trace.span.setAttributes({ "http.response.status_code": status });
  trace.span.end(status >= 500 ? `answered ${status}` : undefined);
}

/**
 * The register's reserve, with the event's trace context stored in its row,
 * and its own internal span when tracing is on.
 */
export async function reserveTraced(
  register: Pick<EventRegister, "reserve">,
  request: Omit<ReserveRequest, "traceContext">,
  context: TraceContext | undefined,
): Promise<ReserveResult> {
  if (context === undefined) return register.reserve(request);
  const traced = { ...request, traceContext: storedTraceContext(context) };
  const tracing = activeTracing();
  if (tracing === undefined) return register.reserve(traced);
  const span = tracing.startSpan("register reserve", "internal", context, {
    "gateway.sender": request.sender,
    "gateway.event_id": request.eventId,
  });
  try {
    const result = await register.reserve(traced);
    span.setAttributes({ "gateway.reserve.outcome": result.outcome });
    span.end();
    return result;
  } catch (error) {
    span.end(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/** A delivery attempt's trace: the context 1C is sent, and the client span when tracing is on. */
export interface AttemptTrace {
  context: TraceContext;
  traceId: string;
  span: TracedSpan | undefined;
}

/**
 * Continues the trace the event was stored with: a client span, its child,
 * when tracing is on (a new trace for an event stored without one); with
 * tracing off, the stored context goes to 1C as it is, or nothing does.
 */
export function startAttemptTrace(record: EventRecord, attributes: SpanAttributes): AttemptTrace | undefined {
  const stored = readStoredTraceContext(record.traceContext);
  const tracing = activeTracing();
  if (tracing === undefined) return stored === undefined ? undefined : withTraceId(stored, undefined);
  const span = tracing.startSpan("POST /v1/orders/paid", "client", stored, {
    "http.request.method": "POST",
    "gateway.sender": record.sender,
    "gateway.event_id": record.eventId,
    ...attributes,
  });
  return withTraceId(span.context, span);
}

function withTraceId(context: TraceContext, span: TracedSpan | undefined): AttemptTrace {
  return { context, traceId: traceIdOf(context), span };
}
