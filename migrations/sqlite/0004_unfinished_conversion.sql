-- What `relstore convert` is copying into this database: a row from before its first
-- transaction until every transaction of the source is in. A conversion that was killed
-- or failed leaves it, so `relstore info` can say the copy is incomplete rather than
-- show it like a whole database (docs/operations.md).

CREATE TABLE IF NOT EXISTS relstore_conversion (
  id INTEGER PRIMARY KEY NOT NULL CHECK (id = 0),
  source TEXT NOT NULL,
  started_at TEXT NOT NULL
);
