-- oids.sqlite3: one row holding the last OID block handed out (block n = OIDs 16n-15 … 16n).
CREATE TABLE IF NOT EXISTS new_oid (
  zoid INTEGER PRIMARY KEY NOT NULL
);
INSERT INTO new_oid (zoid) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM new_oid);
