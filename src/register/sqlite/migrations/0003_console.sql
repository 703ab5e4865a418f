-- The support console: its search over the register, and its sign-ins (PostgreSQL's 0003).
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.

-- The console's search (statements.ts, search): one index per key it matches exactly, so that
-- its OR is answered index by index (MULTI-INDEX OR). event_id has inbound_events_by_event_id.
CREATE INDEX inbound_events_by_correlation_id ON inbound_events (correlation_id);
-- Partial: the order is NULL until 1C has it; "= ?" implies NOT NULL, so the planner still takes them.
CREATE INDEX inbound_events_by_order_id ON inbound_events (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX inbound_events_by_order_number ON inbound_events (order_number) WHERE order_number IS NOT NULL;
-- The site's own order id and number, inside the stored body. A query must spell the expression
-- exactly like this to use them.
CREATE INDEX inbound_events_by_site_order_id ON inbound_events (json_extract(body, '$.order.id'));
CREATE INDEX inbound_events_by_site_order_number ON inbound_events (json_extract(body, '$.order.number'));

-- The console's sign-ins. Only the SHA-256 of the cookie's id is stored.
CREATE TABLE console_sessions (
  id_digest  TEXT    NOT NULL PRIMARY KEY,
  operator   TEXT    NOT NULL,
  csrf_token TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
-- The purge of expired sessions.
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
