-- What `relstore convert` is copying into this database: a row from before its first
-- transaction until every transaction of the source is in. A conversion that was killed
-- or failed leaves it, so `relstore info` can say the copy is incomplete rather than
-- show it like a whole database (docs/operations.md). Same table as SQLite's migration
-- 0004.

CREATE TABLE IF NOT EXISTS relstore_conversion (
  id SMALLINT NOT NULL PRIMARY KEY,
  source TEXT CHARACTER SET utf8mb4 NOT NULL,
  started_at VARCHAR(32) CHARACTER SET ascii NOT NULL
) ENGINE = InnoDB;
