-- The platforms' own webhook deliveries (Shopify, WooCommerce, Tilda), kept
-- for support with the payload as received (source-port.ts). The same schema
-- as SQLite's 0006.
-- Shipped migrations are never edited: add the next numbered file.

CREATE TABLE source_deliveries (
  -- Never given again after a purge, so an id quoted in a support ticket stays one delivery.
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sender         text COLLATE "C" NOT NULL,
  platform       text COLLATE "C" NOT NULL,
  -- The platform's stable key for the order's payment.
  key            text COLLATE "C" NOT NULL,
  outcome        text   NOT NULL CHECK (outcome IN ('accepted','ignored','unmapped')),
  reason         text,
  -- accepted: its event; unmapped: the event it became once remapped.
  event_id       text COLLATE "C",
  -- JSON: the platform's own ids (webhook id, topic, delivery id…).
  ids            text   NOT NULL,
  payload        text   NOT NULL,
  content_type   text,
  correlation_id text   NOT NULL,
  received_at    bigint NOT NULL,
  remapped_at    bigint,
  CHECK (outcome <> 'accepted' OR event_id IS NOT NULL),
  -- A delivery that became an event goes with it when the event is purged, as its attempts do.
  FOREIGN KEY (sender, event_id) REFERENCES inbound_events (sender, event_id) ON DELETE CASCADE
);

-- A retry storm of one unmappable order is one row (record: INSERT … ON CONFLICT DO NOTHING).
CREATE UNIQUE INDEX source_deliveries_unmapped_once ON source_deliveries (sender, platform, key)
  WHERE outcome = 'unmapped';
-- ofEvent, and the cascade from inbound_events.
CREATE INDEX source_deliveries_by_event ON source_deliveries (sender, event_id) WHERE event_id IS NOT NULL;
-- The list newest first is the primary key; by outcome (the unmapped ones among many ignored), this.
CREATE INDEX source_deliveries_by_outcome ON source_deliveries (outcome, id);
-- The retention purge: accepted rows go only with their events.
CREATE INDEX source_deliveries_by_received ON source_deliveries (received_at) WHERE outcome = 'ignored';
