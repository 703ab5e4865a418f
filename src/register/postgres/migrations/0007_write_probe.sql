-- Readiness's write probe (src/register/writability.ts). The same schema as SQLite's 0007: ping
-- writes a row of a large order's size here and deletes it in the same committed transaction, so
-- it fails where a real reservation would (a standby, a full disk, a read-only tablespace), yet
-- leaves nothing. Logged on purpose: an UNLOGGED table would skip the WAL a reservation needs.
-- Shipped migrations are never edited: add the next numbered file.
CREATE TABLE register_probe (
  id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  probed_at bigint NOT NULL,
  payload   text   NOT NULL
);
