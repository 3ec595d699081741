-- The current revision of an object (its TID and state; none when the object does not
-- exist): in a history-free database its one row, in a history-preserving one the
-- revision current_object names, which a restore may have made older than the newest.
-- The JSON mirror's batches check with it that a state they decoded is still current.

-- @hp
-- @begin
CREATE OR REPLACE FUNCTION relstore_current_state(p_zoid BIGINT)
RETURNS TABLE (tid BIGINT, state BYTEA)
LANGUAGE sql STABLE AS $$
  SELECT c.tid, o.state FROM current_object c
    JOIN object_state o ON o.zoid = c.zoid AND o.tid = c.tid
  WHERE c.zoid = p_zoid;
$$;
-- @end

-- @hf
-- @begin
CREATE OR REPLACE FUNCTION relstore_current_state(p_zoid BIGINT)
RETURNS TABLE (tid BIGINT, state BYTEA)
LANGUAGE sql STABLE AS $$
  SELECT o.tid, o.state FROM object_state o WHERE o.zoid = p_zoid;
$$;
-- @end
