-- Who mapped an unmapped platform delivery again, and why (SQLite's 0010; source-port.ts, markRemapped):
-- a remap sends an order to 1C as a replay does, and a replay's who and why are kept in event_replays. NULL on
-- every delivery not remapped, and on those remapped before this migration (their log line has both).
-- Shipped migrations are never edited: add the next numbered file, with the same number on both backends.
ALTER TABLE source_deliveries ADD COLUMN remapped_by text;
ALTER TABLE source_deliveries ADD COLUMN remap_reason text;
