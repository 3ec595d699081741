-- Finish, history-preserving, in one CALL: takes the commit lock, chooses the TID from the
-- server's clock (unless restoring with p_tid), records the transaction, moves temp_store
-- into object_state and current_object, writes the JSON mirror's rows when p_mirror
-- (docs/json-mirror.md; NULL: an empty commit whose vote could not tell the mode),
-- commits, and returns the TID.
CREATE PROCEDURE relstore_finish(IN p_tid BIGINT, IN p_packed BOOLEAN, IN p_username BLOB,
                                 IN p_description BLOB, IN p_extension BLOB,
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
  SELECT COALESCE(MAX(tid), 0) INTO v_last FROM "transaction";
  IF v_tid IS NULL THEN
    CALL relstore_make_tid(UTC_TIMESTAMP(6), v_last, v_tid);
  ELSEIF v_tid <= v_last THEN
    -- The vote checked this; a commit may have finished since, before this one's lock.
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'cannot restore this transaction: one at or after its TID finished meanwhile (TIDs must increase)';
  END IF;
  INSERT INTO "transaction" (tid, packed, is_empty, username, description, extension)
    VALUES (v_tid, p_packed, NOT EXISTS (SELECT 1 FROM temp_store), p_username,
            p_description, p_extension);
  -- prev_tid is the revision this one replaces (for restore too, which brings no serial).
  INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state)
    SELECT t.zoid, v_tid, COALESCE(c.tid, 0), t.md5, COALESCE(LENGTH(t.state), 0), t.state
    FROM temp_store t LEFT JOIN current_object c ON c.zoid = t.zoid
    ORDER BY t.zoid;
  INSERT INTO current_object (zoid, tid)
    SELECT zoid, v_tid FROM temp_store ORDER BY zoid
    ON DUPLICATE KEY UPDATE tid = v_tid;
  -- A vote with blobs left their chunks in temp_blob_chunk and set @relstore_blobs.
  IF @relstore_blobs THEN
    CALL relstore_move_blobs(v_tid);
  END IF;
  -- In-commit JSON mirror: the commit's rows (uploaded to temp_json with the call) go in
  -- with the data.
  IF p_mirror THEN
    CALL relstore_json_mirror_write(v_tid);
  END IF;
  -- last_tid follows only while the mirror holds everything before this commit, so that
  -- it keeps meaning "mirrored up to here" while a mirror switched on a moment ago is
  -- still being caught up. p_mirror NULL: an empty commit, whose vote could not tell the
  -- mode (it comes with the rows of the objects written); the vote's share lock on the
  -- mode holds it as read here.
  IF p_mirror IS NOT FALSE THEN
    BEGIN
      DECLARE CONTINUE HANDLER FOR 1146 BEGIN END;  -- no mirror tables (before 0002)
      UPDATE relstore_json_mirror m SET m.last_tid = v_tid
        WHERE m.id = 0 AND (p_mirror OR m.mode = 'in-commit') AND m.last_tid < v_tid
          AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.tid > m.last_tid AND o.tid < v_tid)
          AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.tid > v_tid);
    END;
  END IF;
  DELETE FROM temp_store;
  COMMIT;
  SELECT v_tid AS tid;
END
