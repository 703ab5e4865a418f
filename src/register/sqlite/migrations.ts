/**
 * Numbered, append-only. Once a migration has shipped it is never edited:
 * add the next one. The schema version lives in PRAGMA user_version.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: "inbound event register, delivery attempts, replays",
    sql: `
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
    `,
  },
  {
    version: 2,
    name: "console search indexes, console sessions",
    sql: `
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
    `,
  },
  {
    version: 3,
    name: "console sessions bound to a credential, with an idle timeout",
    sql: `
      -- Sessions from before are bound to no credential: they are ended, and everyone signs in once more.
      DROP TABLE console_sessions;
      CREATE TABLE console_sessions (
        id_digest         TEXT    NOT NULL PRIMARY KEY,
        operator          TEXT    NOT NULL,
        credential_digest TEXT    NOT NULL,  -- SHA-256 of the operator's token digest at sign-in
        csrf_token        TEXT    NOT NULL,
        created_at        INTEGER NOT NULL,
        expires_at        INTEGER NOT NULL,  -- the absolute deadline
        last_used_at      INTEGER NOT NULL,
        idle_ms           INTEGER NOT NULL   -- the idle deadline is last_used_at + idle_ms
      ) STRICT, WITHOUT ROWID;
      -- No index for the purge: it runs at sign-in and with the retention purge, over a few rows per operator.
    `,
  },
];
