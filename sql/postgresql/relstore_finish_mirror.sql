-- relstore_finish for a commit made while the JSON mirror is in in-commit mode: the same
-- move (of p_record_zoids, p_md5s and p_record_states, as relstore_finish's arrays), then
-- the commit's mirror rows (decoded by the client), its undecodable states and
-- its deletions, in the same transaction. last_tid moves to the new TID only if the
-- mirror held everything before this commit (no revision newer than last_tid but this
-- commit's), so that it keeps meaning "everything up to here is mirrored" while a mirror
-- switched on a moment ago is still being caught up.
-- @begin
CREATE OR REPLACE FUNCTION relstore_finish_mirror(
  p_forced_tid BIGINT, p_packed BOOLEAN, p_username BYTEA, p_description BYTEA,
  p_extension BYTEA, p_record_zoids BIGINT[], p_md5s TEXT[], p_record_states BYTEA[],
  p_zoids BIGINT[], p_class_names BYTEA[], p_ghosts BYTEA[],
  p_states BYTEA[], p_refs TEXT[], p_error_zoids BIGINT[], p_errors TEXT[],
  p_deleted BIGINT[])
RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  v_tid BIGINT;
BEGIN
  v_tid := relstore_finish(p_forced_tid, p_packed, p_username, p_description, p_extension,
                           p_record_zoids, p_md5s, p_record_states);
  PERFORM relstore_json_mirror_write(
    false, p_zoids, array_fill(v_tid, ARRAY[cardinality(p_zoids)]), p_class_names, p_ghosts,
    p_states, p_refs, p_error_zoids, array_fill(v_tid, ARRAY[cardinality(p_error_zoids)]),
    p_errors, p_deleted);
  UPDATE relstore_json_mirror m SET last_tid = v_tid
    WHERE m.id = 0 AND m.last_tid < v_tid
      AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.tid > m.last_tid AND o.tid <> v_tid);
  RETURN v_tid;
END;
$$;
-- @end
