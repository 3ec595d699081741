-- What `relstore convert` is copying into this database: a row from before its first
-- transaction until every transaction of the source is in. A conversion that was killed
-- or failed leaves it, so `relstore info` can say the copy is incomplete rather than
-- show it like a whole database (docs/operations.md). Same table as SQLite's migration
-- 0004.

CREATE TABLE relstore_conversion (
  id SMALLINT PRIMARY KEY NOT NULL CHECK (id = 0),
  source TEXT NOT NULL,
  started_at TEXT NOT NULL
);

-- RelStorage's zap_all empties object_state with TRUNCATE (migration 0006): nothing of an
-- unfinished conversion is left then, and the note goes with it, as relstore's zap does.
-- @begin
CREATE FUNCTION relstore_conversion_truncated() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DELETE FROM %I.relstore_conversion', TG_TABLE_SCHEMA);
  RETURN NULL;
END;
$$;
-- @end
CREATE TRIGGER relstore_conversion_truncated
  BEFORE TRUNCATE ON object_state
  FOR EACH STATEMENT EXECUTE FUNCTION relstore_conversion_truncated();
