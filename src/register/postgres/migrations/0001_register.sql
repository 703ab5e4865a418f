-- The inbound event register, its delivery attempts and replays: the same
-- schema as SQLite's migration 1. Times are epoch milliseconds (bigint), as
-- the port passes them. Keys collate "C" so that ordering and keyset pages
-- agree byte for byte with SQLite's.
-- Shipped migrations are never edited: add the next numbered file.

CREATE TABLE inbound_events (
  sender            text COLLATE "C" NOT NULL,
  event_id          text COLLATE "C" NOT NULL,
  fingerprint       text    NOT NULL,
  policy_version    text    NOT NULL,
  status            text    NOT NULL CHECK (status IN ('PROCESSING','SUCCEEDED','FAILED_RETRYABLE','FAILED_FINAL')),
  correlation_id    text    NOT NULL,
  body              text    NOT NULL,
  response_status   integer,
  response_body     text,
  order_id          text,
  order_number      text,
  last_error        text,
  last_error_class  text,
  attempts          integer NOT NULL DEFAULT 0,  -- claims, all rounds: attempts started
  finished_attempts integer NOT NULL DEFAULT 0,  -- attempts that wrote an outcome; the gap is crashes
  round_attempts    integer NOT NULL DEFAULT 0,  -- attempts since acceptance or the last replay: the budget
  round_started_at  bigint  NOT NULL,
  lease_owner       text,
  lease_token       bigint  NOT NULL DEFAULT 0,  -- fencing token: grows on every claim
  lease_until       bigint,
  next_attempt_at   bigint,
  received_at       bigint  NOT NULL,
  updated_at        bigint  NOT NULL,
  PRIMARY KEY (sender, event_id)
);

CREATE INDEX inbound_events_due ON inbound_events (next_attempt_at, received_at)
  WHERE status IN ('PROCESSING','FAILED_RETRYABLE');
CREATE INDEX inbound_events_by_status ON inbound_events (status, updated_at);
CREATE INDEX inbound_events_by_received ON inbound_events (received_at, sender, event_id);
CREATE INDEX inbound_events_by_event_id ON inbound_events (event_id);

CREATE TABLE delivery_attempts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sender       text COLLATE "C" NOT NULL,
  event_id     text COLLATE "C" NOT NULL,
  attempt      integer NOT NULL,
  lease_token  bigint  NOT NULL,
  worker       text    NOT NULL,
  started_at   bigint  NOT NULL,
  finished_at  bigint,
  duration_ms  integer,
  outcome      text,
  http_status  integer,
  error_class  text,
  detail       text,
  applied      boolean,                          -- false: the lease was lost, the outcome was not written
  -- Also the index the cascade from inbound_events uses.
  UNIQUE (sender, event_id, lease_token),
  FOREIGN KEY (sender, event_id) REFERENCES inbound_events (sender, event_id) ON DELETE CASCADE
);

CREATE TABLE event_replays (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sender       text COLLATE "C" NOT NULL,
  event_id     text COLLATE "C" NOT NULL,
  requested_by text    NOT NULL,
  reason       text    NOT NULL,
  forced       boolean NOT NULL,
  from_status  text    NOT NULL,
  requested_at bigint  NOT NULL,
  FOREIGN KEY (sender, event_id) REFERENCES inbound_events (sender, event_id) ON DELETE CASCADE
);
-- The purge's cascade and the replay history look replays up by event.
CREATE INDEX event_replays_by_event ON event_replays (sender, event_id);
