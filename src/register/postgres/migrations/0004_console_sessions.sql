-- Console sessions bound to the credential that opened them, with an idle
-- timeout as well as the absolute one. Sessions from before are bound to no
-- credential: they are ended, and everyone signs in once more.
-- Shipped migrations are never edited: add the next numbered file.
DROP TABLE console_sessions;
CREATE TABLE console_sessions (
  id_digest         text COLLATE "C" PRIMARY KEY,
  operator          text   NOT NULL,
  -- SHA-256 of the operator's token digest at sign-in.
  credential_digest text   NOT NULL,
  csrf_token        text   NOT NULL,
  created_at        bigint NOT NULL,
  -- The absolute deadline.
  expires_at        bigint NOT NULL,
  last_used_at      bigint NOT NULL,
  -- The idle deadline is last_used_at + idle_ms.
  idle_ms           bigint NOT NULL
);
-- No index for the purge: it runs at sign-in and with the retention purge, over a few rows per operator.
