-- The platforms' own webhook deliveries (Shopify, WooCommerce, Tilda), kept for support with the payload
-- as received (PostgreSQL's 0006; source-port.ts).
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.

CREATE TABLE source_deliveries (
  -- AUTOINCREMENT: an id is never given again after a purge, so an id quoted in a support ticket stays one delivery.
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  sender         TEXT    NOT NULL,
  platform       TEXT    NOT NULL,
  key            TEXT    NOT NULL,  -- the platform's stable key for the order's payment
  outcome        TEXT    NOT NULL CHECK (outcome IN ('accepted','ignored','unmapped')),
  reason         TEXT,
  event_id       TEXT,              -- accepted: its event; unmapped: the event it became once remapped
  ids            TEXT    NOT NULL,  -- JSON: the platform's own ids (webhook id, topic, delivery id…)
  payload        TEXT    NOT NULL,
  content_type   TEXT,
  correlation_id TEXT    NOT NULL,
  received_at    INTEGER NOT NULL,
  remapped_at    INTEGER,
  CHECK (outcome <> 'accepted' OR event_id IS NOT NULL),
  -- A delivery that became an event goes with it when the event is purged, as its attempts do.
  FOREIGN KEY (sender, event_id) REFERENCES inbound_events (sender, event_id) ON DELETE CASCADE
) STRICT;

-- A retry storm of one unmappable order is one row (record: INSERT … ON CONFLICT DO NOTHING).
CREATE UNIQUE INDEX source_deliveries_unmapped_once ON source_deliveries (sender, platform, key)
  WHERE outcome = 'unmapped';
-- ofEvent, and the cascade from inbound_events. "event_id = ?" implies NOT NULL: the planner takes it.
CREATE INDEX source_deliveries_by_event ON source_deliveries (sender, event_id) WHERE event_id IS NOT NULL;
-- The list newest first is the primary key; by outcome (the unmapped ones among many ignored), this.
CREATE INDEX source_deliveries_by_outcome ON source_deliveries (outcome, id);
-- The retention purge: accepted rows go only with their events. Its query spells this condition exactly.
CREATE INDEX source_deliveries_by_received ON source_deliveries (received_at) WHERE outcome = 'ignored';
