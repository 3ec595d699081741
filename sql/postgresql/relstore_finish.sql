-- Finish (design.md §4 step 4), called in the vote's transaction and followed by COMMIT
-- in the same message: takes the commit lock (pg_advisory_xact_lock(-1), RelStorage's
-- key), chooses the TID from the server clock unless the caller forces one, and moves
-- temp_store into the permanent tables. The commit lock is held only from here to the
-- COMMIT. Returns the TID. Rows of the big tables are reached through their indexes with
-- correlated subqueries and "= ANY(ARRAY(...))", never by a join with temp_store, which
-- has no statistics and could be planned as a scan of the whole table.

-- @hp
-- @begin
CREATE OR REPLACE FUNCTION relstore_finish(
  p_forced_tid BIGINT, p_packed BOOLEAN, p_username BYTEA, p_description BYTEA,
  p_extension BYTEA)
RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  v_tid BIGINT := p_forced_tid;
  v_last BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(-1);
  IF v_tid IS NULL THEN
    -- Not relstore_current_tid() and no subquery in the call: as two plain statements
    -- this costs a third of the time (measured: 70 µs before).
    SELECT COALESCE(MAX(tid), 0) INTO v_last FROM "transaction";
    v_tid := relstore_later_than(
      relstore_tid_for_epoch(extract(epoch FROM clock_timestamp())::DOUBLE PRECISION), v_last);
  END IF;
  INSERT INTO "transaction" (tid, packed, is_empty, username, description, extension)
    VALUES (v_tid, p_packed, NOT EXISTS (SELECT 1 FROM temp_store), p_username,
            p_description, p_extension);
  -- prev_tid is what was current, so restored records (which come with prev_tid 0) get
  -- it right too.
  INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state)
    SELECT t.zoid, v_tid, COALESCE((SELECT c.tid FROM current_object c WHERE c.zoid = t.zoid), 0),
           t.md5, COALESCE(length(t.state), 0), t.state
    FROM temp_store t ORDER BY t.zoid;
  INSERT INTO current_object (zoid, tid)
    SELECT zoid, v_tid FROM temp_store ORDER BY zoid
    ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid;
  RETURN v_tid;
END;
$$;
-- @end

-- @hf
-- @begin
CREATE OR REPLACE FUNCTION relstore_finish(
  p_forced_tid BIGINT, p_packed BOOLEAN, p_username BYTEA, p_description BYTEA,
  p_extension BYTEA)
RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  v_tid BIGINT := p_forced_tid;
  v_last BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(-1);
  IF v_tid IS NULL THEN
    -- Not relstore_current_tid() and no subquery in the call: as two plain statements
    -- this costs a third of the time (measured: 70 µs before).
    SELECT COALESCE(MAX(tid), 0) INTO v_last FROM object_state;
    v_tid := relstore_later_than(
      relstore_tid_for_epoch(extract(epoch FROM clock_timestamp())::DOUBLE PRECISION), v_last);
  END IF;
  -- Blob rows belong to the state being replaced (deleted objects lose theirs by cascade).
  DELETE FROM blob_chunk WHERE zoid = ANY (ARRAY(SELECT zoid FROM temp_store));
  DELETE FROM object_state
    WHERE zoid = ANY (ARRAY(SELECT zoid FROM temp_store WHERE state IS NULL));
  INSERT INTO object_state (zoid, tid, state_size, state)
    SELECT zoid, v_tid, length(state), state FROM temp_store
    WHERE state IS NOT NULL ORDER BY zoid
    ON CONFLICT (zoid) DO UPDATE
      SET tid = excluded.tid, state_size = excluded.state_size, state = excluded.state;
  RETURN v_tid;
END;
$$;
-- @end
