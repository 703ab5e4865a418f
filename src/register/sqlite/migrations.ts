/**
 * Numbered, append-only. A released migration is never edited: add the next.
 * The schema version lives in PRAGMA user_version.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: "inbound event register",
    sql: `
      CREATE TABLE inbound_events (
        sender          TEXT    NOT NULL,
        event_id        TEXT    NOT NULL,
        fingerprint     TEXT    NOT NULL,
        policy_version  TEXT    NOT NULL,
        status          TEXT    NOT NULL CHECK (status IN ('PROCESSING','SUCCEEDED','FAILED_RETRYABLE','FAILED_FINAL')),
        correlation_id  TEXT    NOT NULL,
        body            TEXT    NOT NULL,
        response_status INTEGER,
        response_body   TEXT,
        order_id        TEXT,
        order_number    TEXT,
        last_error      TEXT,
        attempts        INTEGER NOT NULL DEFAULT 0,
        lease_owner     TEXT,
        lease_token     INTEGER NOT NULL DEFAULT 0,
        lease_until     INTEGER,
        next_attempt_at INTEGER,
        received_at     INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL,
        PRIMARY KEY (sender, event_id)
      ) STRICT;
      CREATE INDEX inbound_events_pending
        ON inbound_events (next_attempt_at)
        WHERE status IN ('PROCESSING','FAILED_RETRYABLE');
    `,
  },
];
