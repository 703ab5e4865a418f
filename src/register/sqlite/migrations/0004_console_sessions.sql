-- Console sessions bound to a credential, with an idle timeout (PostgreSQL's 0004).
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.

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
