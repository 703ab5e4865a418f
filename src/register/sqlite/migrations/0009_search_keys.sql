-- Fewer index entries per new event (docs/performance.md, "Fewer index entries per event"; PostgreSQL's 0009 holds
-- nothing, and says why).
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.
--
-- Each new event wrote its row and 8 index entries, two of them json_extract over its body: a JSON parse
-- apiece on the writer thread, inside the transaction every request of its batch waits for. Now:
-- - the site's order id and number are columns, written at reservation from the event already parsed
--   (port.ts, ReserveRequest's SiteOrderKeys), and indexed as columns;
-- - the primary key is (event_id, sender): the same uniqueness and the same lookups by both columns, and its
--   prefix serves the console's search by event_id, so that index of its own is gone.
--
-- A primary key cannot be altered in place: the table is rebuilt as SQLite's documentation prescribes for any
-- schema change ALTER TABLE cannot make ("Making Other Kinds Of Table Schema Changes"). The migrations run
-- with foreign keys off, so that dropping the old table does not cascade to the attempts, replays and
-- platform deliveries that refer to it by name; sqlite-register.ts, migrate, checks every foreign key
-- before it commits. Every row is copied once: measured, 10 s for 300 000 events and 33 s for a million
-- (each with an attempt), at the start of the first process of this version.

CREATE TABLE inbound_events_0009 (
  sender            TEXT    NOT NULL,
  event_id          TEXT    NOT NULL,
  fingerprint       TEXT    NOT NULL,
  policy_version    TEXT    NOT NULL,
  status            TEXT    NOT NULL CHECK (status IN ('PROCESSING','SUCCEEDED','FAILED_RETRYABLE','FAILED_FINAL')),
  correlation_id    TEXT    NOT NULL,
  body              TEXT    NOT NULL,
  response_status   INTEGER,
  response_body     TEXT,
  order_id          TEXT,
  order_number      TEXT,
  last_error        TEXT,
  last_error_class  TEXT,
  attempts          INTEGER NOT NULL DEFAULT 0,  -- claims, all rounds: attempts started
  finished_attempts INTEGER NOT NULL DEFAULT 0,  -- attempts that wrote an outcome; the gap is crashes
  round_attempts    INTEGER NOT NULL DEFAULT 0,  -- attempts since acceptance or the last replay: the budget
  round_started_at  INTEGER NOT NULL,
  lease_owner       TEXT,
  lease_token       INTEGER NOT NULL DEFAULT 0,  -- fencing token: grows on every claim
  lease_until       INTEGER,
  next_attempt_at   INTEGER,
  received_at       INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,
  trace_context     TEXT,                        -- 0008
  site_order_id     TEXT,                        -- the body's order.id; NULL only for a body without one
  site_order_number TEXT,                        -- the body's order.number, alike
  PRIMARY KEY (event_id, sender)
) STRICT;

INSERT INTO inbound_events_0009
SELECT sender, event_id, fingerprint, policy_version, status, correlation_id, body, response_status, response_body,
       order_id, order_number, last_error, last_error_class, attempts, finished_attempts, round_attempts,
       round_started_at, lease_owner, lease_token, lease_until, next_attempt_at, received_at, updated_at,
       trace_context,
       -- What the old indexes held; NULL for a body that is not JSON (none the gateway wrote) or has no order.
       iif(json_valid(body), json_extract(body, '$.order.id'), NULL),
       iif(json_valid(body), json_extract(body, '$.order.number'), NULL)
  FROM inbound_events;

DROP TABLE inbound_events;
ALTER TABLE inbound_events_0009 RENAME TO inbound_events;

-- The indexes of 0001 and 0003, but the one on event_id alone (the primary key's prefix) and the two
-- json_extract ones.
CREATE INDEX inbound_events_due ON inbound_events (next_attempt_at, received_at)
  WHERE status IN ('PROCESSING','FAILED_RETRYABLE');
CREATE INDEX inbound_events_by_status ON inbound_events (status, updated_at);
CREATE INDEX inbound_events_by_received ON inbound_events (received_at, sender, event_id);
CREATE INDEX inbound_events_by_correlation_id ON inbound_events (correlation_id);
CREATE INDEX inbound_events_by_order_id ON inbound_events (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX inbound_events_by_order_number ON inbound_events (order_number) WHERE order_number IS NOT NULL;
CREATE INDEX inbound_events_by_site_order_id ON inbound_events (site_order_id);
CREATE INDEX inbound_events_by_site_order_number ON inbound_events (site_order_number);
