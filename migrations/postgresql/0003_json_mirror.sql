-- The JSON mirror (docs/json-mirror.md): object_json holds the decoded current state of
-- every object, relstore_json_mirror its mode and progress, object_json_error the current
-- states that could not be decoded. Same tables and meaning as SQLite's migration 0002,
-- with PostgreSQL's types: state JSONB, refs BIGINT[].

-- @common
CREATE TABLE object_json (
  zoid BIGINT PRIMARY KEY NOT NULL,
  tid BIGINT NOT NULL,
  class_name TEXT,
  ghost_pickle BYTEA,
  state JSONB,
  refs BIGINT[] NOT NULL DEFAULT '{}'
);
CREATE INDEX object_json_class_name ON object_json (class_name);
CREATE INDEX object_json_tid ON object_json (tid);
-- For containment queries (state @> '{"tags": ["featured"]}'). jsonb_path_ops answers @>
-- only, and is smaller and cheaper to update than the default jsonb_ops. Optional: drop it
-- when commits matter more than those queries (docs/json-mirror.md).
CREATE INDEX object_json_state ON object_json USING GIN (state jsonb_path_ops);

CREATE TABLE object_json_error (
  zoid BIGINT PRIMARY KEY NOT NULL,
  tid BIGINT NOT NULL,
  message TEXT NOT NULL
);

CREATE TABLE relstore_json_mirror (
  id SMALLINT PRIMARY KEY NOT NULL CHECK (id = 0),
  mode TEXT NOT NULL DEFAULT 'off' CHECK (mode IN ('off', 'in-commit', 'follow')),
  last_tid BIGINT NOT NULL DEFAULT 0
);
INSERT INTO relstore_json_mirror (id) VALUES (0);

-- newt.db's names for the same rows.
CREATE VIEW newt AS
  SELECT zoid, class_name, ghost_pickle, state FROM object_json;

-- Wakes `relstore json-mirror follow` (LISTEN relstore_json_mirror) when a commit writes
-- object states while the mirror is in follow mode. A statement trigger rather than a
-- call in relstore_finish, so RelStorage's own commits wake the follower too. The
-- notification is delivered at COMMIT, and only then.
-- @begin
CREATE FUNCTION relstore_json_mirror_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM relstore_json_mirror WHERE id = 0 AND mode = 'follow') THEN
    PERFORM pg_notify('relstore_json_mirror', '');
  END IF;
  RETURN NULL;
END;
$$;
-- @end
CREATE TRIGGER relstore_json_mirror_notify
  AFTER INSERT OR UPDATE ON object_state
  FOR EACH STATEMENT EXECUTE FUNCTION relstore_json_mirror_notify();
