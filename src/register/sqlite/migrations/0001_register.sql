-- The inbound event register, its delivery attempts and replays: the same schema as PostgreSQL's 0001.
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.

CREATE TABLE inbound_events (
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
  PRIMARY KEY (sender, event_id)
) STRICT;

CREATE INDEX inbound_events_due ON inbound_events (next_attempt_at, received_at)
  WHERE status IN ('PROCESSING','FAILED_RETRYABLE');
CREATE INDEX inbound_events_by_status ON inbound_events (status, updated_at);
CREATE INDEX inbound_events_by_received ON inbound_events (received_at, sender, event_id);
CREATE INDEX inbound_events_by_event_id ON inbound_events (event_id);

CREATE TABLE delivery_attempts (
  id           INTEGER PRIMARY KEY,
  sender       TEXT    NOT NULL,
  event_id     TEXT    NOT NULL,
  attempt      INTEGER NOT NULL,
  lease_token  INTEGER NOT NULL,
  worker       TEXT    NOT NULL,
  started_at   INTEGER NOT NULL,
  finished_at  INTEGER,
  duration_ms  INTEGER,
  outcome      TEXT,
  http_status  INTEGER,
  error_class  TEXT,
  detail       TEXT,
  applied      INTEGER,                            -- 0: the lease was lost, the outcome was not written
  UNIQUE (sender, event_id, lease_token),
  FOREIGN KEY (sender, event_id) REFERENCES inbound_events (sender, event_id) ON DELETE CASCADE
) STRICT;

CREATE TABLE event_replays (
  id           INTEGER PRIMARY KEY,
  sender       TEXT    NOT NULL,
  event_id     TEXT    NOT NULL,
  requested_by TEXT    NOT NULL,
  reason       TEXT    NOT NULL,
  forced       INTEGER NOT NULL,
  from_status  TEXT    NOT NULL,
  requested_at INTEGER NOT NULL,
  FOREIGN KEY (sender, event_id) REFERENCES inbound_events (sender, event_id) ON DELETE CASCADE
) STRICT;
-- The purge's cascade and the replay history look replays up by event.
CREATE INDEX event_replays_by_event ON event_replays (sender, event_id);
