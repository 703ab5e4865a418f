-- The senders' rate limit, shared by every instance on this database: one row
-- per sender, holding its current window's start and hits.
-- UNLOGGED: a counter is not worth an fsync per request, and a transaction
-- that writes only unlogged tables commits without waiting for one; a crash
-- empties the table, which at worst forgives one window.
-- Shipped migrations are never edited: add the next numbered file.

CREATE UNLOGGED TABLE rate_limit_windows (
  key          text COLLATE "C" PRIMARY KEY,
  window_start bigint  NOT NULL,
  hits         integer NOT NULL
);
