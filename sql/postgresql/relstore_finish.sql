-- Finish (design.md §4 step 4), called in the vote's transaction and followed by COMMIT
-- in the same message: takes the commit lock (the commit_row_lock row FOR UPDATE, as
-- RelStorage's lock_and_choose_tid does), chooses the TID from the server clock unless the caller forces one, and moves
-- the records into the permanent tables: p_zoids, p_md5s and p_states, or temp_store's rows
-- when they are NULL (relstore_records). The commit lock is held only from here to the
-- COMMIT. Returns the TID. Rows of the big tables are reached through their indexes with
-- correlated subqueries and "= ANY(ARRAY(...))", never by a join with the records, which
-- have no statistics and could be planned as a scan of the whole table. (Processes of
-- relstore before 2026-11-30 call the overload without the arrays, which passes them on
-- as NULL, so that every process takes the same commit lock.)

-- @hp
-- @begin
CREATE OR REPLACE FUNCTION relstore_finish(
  p_forced_tid BIGINT, p_packed BOOLEAN, p_username BYTEA, p_description BYTEA,
  p_extension BYTEA, p_zoids BIGINT[], p_md5s TEXT[], p_states BYTEA[])
RETURNS BIGINT
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_tid BIGINT := p_forced_tid;
  v_last BIGINT;
BEGIN
  PERFORM tid FROM commit_row_lock FOR UPDATE;
  IF NOT FOUND THEN  -- without its row the lock would exclude nothing
    RAISE EXCEPTION 'the table commit_row_lock has no row: the commit lock cannot be taken'
      USING HINT = 'INSERT INTO commit_row_lock (tid) VALUES (0)';
  END IF;
  -- The last TID as plain statements, not relstore_last_tid() or relstore_current_tid()
  -- and no subquery in the call: this costs a third of the time (measured: 70 µs before).
  SELECT COALESCE(MAX(tid), 0) INTO v_last FROM "transaction";
  IF v_tid IS NULL THEN
    v_tid := relstore_later_than(
      relstore_tid_for_epoch(extract(epoch FROM clock_timestamp())::DOUBLE PRECISION), v_last);
  ELSIF v_tid <= v_last THEN
    -- The vote checked this; a commit may have finished since, before this one's lock.
    RAISE EXCEPTION 'cannot restore transaction %: one at or after it finished meanwhile', v_tid
      USING HINT = 'TIDs must increase';
  END IF;
  INSERT INTO "transaction" (tid, packed, is_empty, username, description, extension)
    VALUES (v_tid, p_packed,
            NOT EXISTS (SELECT 1 FROM relstore_records(p_zoids, NULL, p_md5s, p_states)),
            p_username, p_description, p_extension);
  -- prev_tid is what was current, so restored records (which come with prev_tid 0) get
  -- it right too.
  INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state)
    SELECT t.zoid, v_tid, COALESCE((SELECT c.tid FROM current_object c WHERE c.zoid = t.zoid), 0),
           t.md5, COALESCE(length(t.state), 0), t.state
    FROM relstore_records(p_zoids, NULL, p_md5s, p_states) t ORDER BY t.zoid;
  INSERT INTO current_object (zoid, tid)
    SELECT t.zoid, v_tid FROM relstore_records(p_zoids, NULL, p_md5s, p_states) t
    ORDER BY t.zoid
    ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid;
  RETURN v_tid;
END;
$$;
-- @end

-- @hf
-- @begin
CREATE OR REPLACE FUNCTION relstore_finish(
  p_forced_tid BIGINT, p_packed BOOLEAN, p_username BYTEA, p_description BYTEA,
  p_extension BYTEA, p_zoids BIGINT[], p_md5s TEXT[], p_states BYTEA[])
RETURNS BIGINT
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_tid BIGINT := p_forced_tid;
  v_last BIGINT;
BEGIN
  PERFORM tid FROM commit_row_lock FOR UPDATE;
  IF NOT FOUND THEN  -- without its row the lock would exclude nothing
    RAISE EXCEPTION 'the table commit_row_lock has no row: the commit lock cannot be taken'
      USING HINT = 'INSERT INTO commit_row_lock (tid) VALUES (0)';
  END IF;
  -- The last TID as plain statements, not relstore_last_tid() or relstore_current_tid()
  -- and no subquery in the call: this costs a third of the time (measured: 70 µs before).
  SELECT COALESCE(MAX(tid), 0) INTO v_last FROM object_state;
  -- A deletion of the object with the newest TID took that TID's row away: the next TID
  -- must still follow it (a database migrated to relstore_hf_deletion).
  IF to_regclass('relstore_hf_deletion') IS NOT NULL THEN
    v_last := GREATEST(v_last, COALESCE(
      (SELECT d.tid FROM relstore_hf_deletion d WHERE d.id = 0), 0));
  END IF;
  IF v_tid IS NULL THEN
    v_tid := relstore_later_than(
      relstore_tid_for_epoch(extract(epoch FROM clock_timestamp())::DOUBLE PRECISION), v_last);
  ELSIF v_tid <= v_last THEN
    -- The vote checked this; a commit may have finished since, before this one's lock.
    RAISE EXCEPTION 'cannot restore transaction %: one at or after it finished meanwhile', v_tid
      USING HINT = 'TIDs must increase';
  END IF;
  -- Blob rows belong to the state being replaced (deleted objects lose theirs by cascade).
  DELETE FROM blob_chunk b WHERE b.zoid = ANY (ARRAY(
    SELECT t.zoid FROM relstore_records(p_zoids, NULL, p_md5s, p_states) t));
  DELETE FROM object_state o WHERE o.zoid = ANY (ARRAY(
    SELECT t.zoid FROM relstore_records(p_zoids, NULL, p_md5s, p_states) t
    WHERE t.state IS NULL));
  -- Polls cannot list removed rows: record that this commit removed some (a database
  -- migrated to relstore_hf_deletion; src/backend/deletion_mark.h).
  IF FOUND AND to_regclass('relstore_hf_deletion') IS NOT NULL THEN
    UPDATE relstore_hf_deletion SET tid = v_tid WHERE id = 0;
  END IF;
  INSERT INTO object_state (zoid, tid, state_size, state)
    SELECT t.zoid, v_tid, length(t.state), t.state
    FROM relstore_records(p_zoids, NULL, p_md5s, p_states) t
    WHERE t.state IS NOT NULL ORDER BY t.zoid
    ON CONFLICT (zoid) DO UPDATE
      SET tid = excluded.tid, state_size = excluded.state_size, state = excluded.state;
  RETURN v_tid;
END;
$$;
-- @end

-- @common
-- @begin
CREATE OR REPLACE FUNCTION relstore_finish(
  p_forced_tid BIGINT, p_packed BOOLEAN, p_username BYTEA, p_description BYTEA,
  p_extension BYTEA)
RETURNS BIGINT
LANGUAGE sql AS $$
  SELECT relstore_finish(p_forced_tid, p_packed, p_username, p_description, p_extension,
                         NULL::BIGINT[], NULL::TEXT[], NULL::BYTEA[]);
$$;
-- @end
