-- Readiness's write probe (PostgreSQL's 0007; src/register/writability.ts). ping writes a row of a
-- large order's size here and deletes it in the same committed transaction: it needs what a real
-- reservation needs (the write lock, room to grow the WAL, a writable file), yet leaves nothing.
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.

CREATE TABLE register_probe (
  id        INTEGER PRIMARY KEY,
  probed_at INTEGER NOT NULL,
  payload   TEXT    NOT NULL
) STRICT;
