-- The mirror's statement trigger on object_state (migration 0003) runs on every commit,
-- RelStorage's included, and reads relstore_json_mirror. An application role that was
-- granted rights on RelStorage's tables alone has none on that table, so its commits
-- failed with "permission denied" once the migration had run. The function now runs
-- with its owner's rights (the role that migrated), pinned to the schema it was created
-- in so that a caller's search_path cannot point it at another table.

-- @common
-- @begin
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION relstore_json_mirror_notify() SECURITY DEFINER '
                 'SET search_path = %I, pg_temp', current_schema());
END;
$$;
-- @end
