-- Writes decoded JSON mirror rows, one array element per row, and drops the error entries
-- of the objects written. With p_guard (follow and rebuild batches, read from a snapshot
-- that may be old by now) a row is written only if its TID is still that of the object's
-- current revision and that revision has a state, and never over a newer row; without it
-- (in-commit rows, which are the commit's own) every row is written and replaces what
-- was there, even when a restore gave it an older TID. Raises data_exception when jsonb refuses a state (relstore_json_mirror_write then
-- retries the rows one at a time).
-- @begin
CREATE OR REPLACE FUNCTION relstore_json_mirror_rows(
  p_guard BOOLEAN, p_zoids BIGINT[], p_tids BIGINT[], p_class_names BYTEA[], p_ghosts BYTEA[],
  p_states BYTEA[], p_refs TEXT[])
RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO object_json AS j (zoid, tid, class_name, ghost_pickle, state, refs)
    SELECT u.z, u.t, convert_from(u.c, 'UTF8'), u.g, convert_from(u.s, 'UTF8')::JSONB,
           u.r::BIGINT[]
    FROM unnest(p_zoids, p_tids, p_class_names, p_ghosts, p_states, p_refs)
           AS u (z, t, c, g, s, r)
    WHERE NOT p_guard OR EXISTS (
      SELECT 1 FROM relstore_current_state(u.z) cur
      WHERE cur.tid = u.t AND cur.state IS NOT NULL)
  ON CONFLICT (zoid) DO UPDATE
    SET tid = excluded.tid, class_name = excluded.class_name,
        ghost_pickle = excluded.ghost_pickle, state = excluded.state, refs = excluded.refs
    WHERE NOT p_guard OR j.tid <= excluded.tid;
  -- Error entries are rare: look for them only when there are any.
  IF EXISTS (SELECT 1 FROM object_json_error) THEN
    DELETE FROM object_json_error e WHERE e.zoid = ANY (p_zoids)
      AND EXISTS (SELECT 1 FROM object_json j WHERE j.zoid = e.zoid
                  AND (NOT p_guard OR j.tid >= e.tid));
  END IF;
END;
$$;
-- @end
