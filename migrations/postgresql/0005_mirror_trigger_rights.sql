-- The mirror's statement trigger on object_state (migration 0003) runs on every commit,
-- RelStorage's included, and reads relstore_json_mirror with the committer's rights. An
-- application role granted rights on RelStorage's tables alone has none on that table, so
-- its commits failed with "permission denied" once the migration had run. Such a commit
-- now goes through without waking the follower (which then finds it at its next poll);
-- granting the role SELECT on relstore_json_mirror restores the wake-up. The table is
-- still found through the committer's search_path, as RelStorage's own tables are, so a
-- renamed schema keeps working.

-- @common
-- @begin
CREATE OR REPLACE FUNCTION relstore_json_mirror_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM relstore_json_mirror WHERE id = 0 AND mode = 'follow') THEN
    PERFORM pg_notify('relstore_json_mirror', '');
  END IF;
  RETURN NULL;
EXCEPTION WHEN insufficient_privilege THEN
  RETURN NULL;
END;
$$;
-- @end
