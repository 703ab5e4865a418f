-- The site's order id and number as columns (SQLite's 0009; port.ts, ReserveRequest's SiteOrderKeys).
-- Shipped migrations are never edited: add the next numbered file.
--
-- The console's search found them through two expression indexes over body::jsonb: each new event's body
-- was parsed twice as JSON, inside the reserving statement, to index it. Now a reservation writes them from
-- the event its caller already parsed, and they are indexed as plain columns. (SQLite's 0009 also drops
-- its index on event_id alone for a reordered primary key; here the index stays: PostgreSQL's primary key
-- is not rebuilt, the foreign keys of three tables hang on it.)
--
-- The backfill rewrites every row once, under this transaction's lock: on a register of a million events,
-- some seconds to a minute at the start of the first instance that migrates (the others wait for it).
ALTER TABLE inbound_events ADD COLUMN site_order_id text, ADD COLUMN site_order_number text;
UPDATE inbound_events
   SET site_order_id = body::jsonb #>> '{order,id}', site_order_number = body::jsonb #>> '{order,number}';
DROP INDEX inbound_events_by_site_order_id;
DROP INDEX inbound_events_by_site_order_number;
CREATE INDEX inbound_events_by_site_order_id ON inbound_events (site_order_id);
CREATE INDEX inbound_events_by_site_order_number ON inbound_events (site_order_number);
