-- The W3C trace context each event was accepted under (port.ts, ReserveRequest.traceContext):
-- {"traceparent":…,"tracestate":…} as JSON, so that its delivery attempts, in any process and however late,
-- continue the shop's trace to 1C. NULL for an event that came without one while tracing was off, and for
-- every event recorded before this migration. Nullable without a default: adding it rewrites no row.
-- Shipped migrations are never edited: add the next numbered file.
ALTER TABLE inbound_events ADD COLUMN trace_context text;
