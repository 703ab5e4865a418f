-- How each delivery attempt was claimed (port.ts, AttemptKind).
-- just_in_time: for a free call slot, called at once (every attempt before this migration).
-- ahead: claimed to wait for a slot. One that never finished may never have reached 1C, so the
-- poison rule does not count it (once per event), and its event is never claimed ahead again.
-- Shipped migrations are never edited: add the next numbered file.
ALTER TABLE delivery_attempts ADD COLUMN kind text NOT NULL DEFAULT 'just_in_time'
  CHECK (kind IN ('just_in_time', 'ahead'));
