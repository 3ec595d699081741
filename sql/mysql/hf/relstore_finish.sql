-- Finish, history-free, in one CALL: takes the commit lock, chooses the TID from the
-- server's clock (unless restoring with p_tid), replaces the objects' rows with
-- temp_store's (a none state deletes the object; p_deletes says whether there is one),
-- writes the JSON mirror's rows when p_mirror (docs/json-mirror.md), commits, and
-- returns the TID.
CREATE PROCEDURE relstore_finish(IN p_tid BIGINT, IN p_deletes BOOLEAN,
                                 IN p_mirror BOOLEAN)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_tid BIGINT;
  DECLARE v_last BIGINT;
  DECLARE v_lock BIGINT;
  -- RelStorage's commit lock: the row of commit_row_lock, held until COMMIT.
  SELECT tid INTO v_lock FROM commit_row_lock WHERE tid = 0 FOR UPDATE;
  SET v_tid = p_tid;
  -- A deletion of the object with the newest TID took that TID's row away: the next
  -- TID must still follow it. A database not migrated to relstore_hf_deletion (error
  -- 1146) has only the rows.
  BEGIN
    DECLARE CONTINUE HANDLER FOR 1146
      SELECT COALESCE(MAX(tid), 0) INTO v_last FROM object_state;
    SELECT GREATEST(COALESCE(MAX(o.tid), 0),
                    COALESCE((SELECT d.tid FROM relstore_hf_deletion d WHERE d.id = 0), 0))
      INTO v_last FROM object_state o;
  END;
  IF v_tid IS NULL THEN
    CALL relstore_make_tid(UTC_TIMESTAMP(6), v_last, v_tid);
  ELSEIF v_tid <= v_last THEN
    -- The vote checked this; a commit may have finished since, before this one's lock.
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'cannot restore this transaction: one at or after its TID finished meanwhile (TIDs must increase)';
  END IF;
  -- A replaced state's blob chunks belong to it: dropped, as RelStorage's move drops the
  -- chunks of every object it writes (deleted objects lose theirs by cascade too). Most
  -- databases have no chunks at all: one probe of the table spares them the join.
  IF EXISTS (SELECT 1 FROM blob_chunk LIMIT 1) THEN
    DELETE bc FROM temp_store t STRAIGHT_JOIN blob_chunk bc ON bc.zoid = t.zoid;
  END IF;
  IF p_deletes THEN
    -- The temp table drives the join (STRAIGHT_JOIN): with stale statistics on a table
    -- that just grew, the optimizer may otherwise scan object_state once per commit.
    DELETE o FROM temp_store t STRAIGHT_JOIN object_state o ON o.zoid = t.zoid
      WHERE t.state IS NULL;
    -- Polls cannot list removed rows: record that this commit removed some (a database
    -- migrated to relstore_hf_deletion; src/backend/deletion_mark.h).
    IF ROW_COUNT() > 0 AND EXISTS (
        SELECT 1 FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'relstore_hf_deletion') THEN
      UPDATE relstore_hf_deletion SET tid = v_tid WHERE id = 0;
    END IF;
  END IF;
  -- The update clause names temp_store's columns directly rather than VALUES(), which
  -- MySQL 8.0.20 deprecated, or a row alias, which MariaDB lacks.
  INSERT INTO object_state (zoid, tid, state_size, state)
    SELECT t.zoid, v_tid, LENGTH(t.state), t.state FROM temp_store t
    WHERE t.state IS NOT NULL ORDER BY t.zoid
    ON DUPLICATE KEY UPDATE tid = v_tid, state_size = LENGTH(t.state), state = t.state;
  -- A vote with blobs left their chunks in temp_blob_chunk and set @relstore_blobs.
  IF @relstore_blobs THEN
    CALL relstore_move_blobs(v_tid);
  END IF;
  IF p_mirror THEN
    -- In-commit JSON mirror: the commit's rows (uploaded to temp_json with the call) go in
    -- with the data. last_tid follows only while the mirror holds everything before this
    -- commit, so that it keeps meaning "mirrored up to here" while a mirror switched on a
    -- moment ago is still being caught up.
    CALL relstore_json_mirror_write(v_tid);
    UPDATE relstore_json_mirror m SET m.last_tid = v_tid
      WHERE m.id = 0 AND m.last_tid < v_tid
        AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.tid > m.last_tid AND o.tid < v_tid)
        AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.tid > v_tid);
  END IF;
  DELETE FROM temp_store;
  COMMIT;
  SELECT v_tid AS tid;
END
