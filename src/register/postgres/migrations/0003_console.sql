-- The support console: its search over the register, and its sign-ins.
-- Shipped migrations are never edited: add the next numbered file.

-- The console's search (statements.ts, search): one index per key it matches
-- exactly, so that its OR becomes a BitmapOr of index scans. event_id has
-- inbound_events_by_event_id already.
CREATE INDEX inbound_events_by_correlation_id ON inbound_events (correlation_id);
-- Partial: the order is NULL until 1C has it; "= $1" implies NOT NULL, so the planner still takes them.
CREATE INDEX inbound_events_by_order_id ON inbound_events (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX inbound_events_by_order_number ON inbound_events (order_number) WHERE order_number IS NOT NULL;
-- The site's own order id and number, inside the stored body (canonical JSON
-- text). A query must spell the expression exactly like this to use them.
CREATE INDEX inbound_events_by_site_order_id ON inbound_events ((body::jsonb #>> '{order,id}'));
CREATE INDEX inbound_events_by_site_order_number ON inbound_events ((body::jsonb #>> '{order,number}'));

-- The console's sign-ins, shared by every instance. Only the SHA-256 of the
-- cookie's id is stored. Logged: a restart must not sign everyone out.
CREATE TABLE console_sessions (
  id_digest  text COLLATE "C" PRIMARY KEY,
  operator   text   NOT NULL,
  csrf_token text   NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
-- The purge of expired sessions.
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
