-- oids.sqlite3: one row holding the next OID block to hand out (block n = OIDs 16n-15 … 16n),
-- as RelStorage reads and writes it; it starts at 1. The row is filled by
-- OidAllocator::ensure_schema, which also moves on the counter of a file relstore wrote
-- before it read the row this way (it held the last block handed out then).
CREATE TABLE IF NOT EXISTS new_oid (
  zoid INTEGER PRIMARY KEY NOT NULL
);
