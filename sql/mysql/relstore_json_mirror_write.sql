-- Moves the JSON mirror entries waiting in temp_json into object_json and
-- object_json_error, then empties temp_json. An entry is a decoded row (state set), a state
-- that could not be decoded (message set) or an object that is gone (neither). Every
-- object of the batch first loses what the mirror had for it. p_tid: the commit's TID for
-- in-commit entries; NULL keeps each entry's own (follow and rebuild, guarded before).
-- A row the server refuses (MariaDB's JSON_VALID nests 32 levels at most, MySQL 8's JSON
-- 100; a class name too long for its column) must not fail a commit: when the batch
-- insert is refused, the rows go in one at a time and the refused ones become error
-- entries with the server's message. Lock waits, deadlocks, a full lock table (1206) and
-- interruptions are not refusals: they end the commit as they would anywhere else.
CREATE PROCEDURE relstore_json_mirror_write(IN p_tid BIGINT)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_refused BOOLEAN DEFAULT FALSE;
  DECLARE v_count INT;
  DECLARE v_errno INT;
  DECLARE v_last_errno INT;

  DELETE e FROM temp_json t STRAIGHT_JOIN object_json_error e ON e.zoid = t.zoid;
  -- Only when some entry has no row to write (a removal or an undecodable state): the join
  -- reads, and locks, the object_json row of every entry before it looks at t.state.
  IF EXISTS (SELECT 1 FROM temp_json WHERE state IS NULL) THEN
    DELETE j FROM temp_json t STRAIGHT_JOIN object_json j ON j.zoid = t.zoid
      WHERE t.state IS NULL;
  END IF;
  INSERT INTO object_json_error (zoid, tid, message)
    SELECT t.zoid, COALESCE(p_tid, t.tid), CONVERT(t.message USING utf8mb4) FROM temp_json t
    WHERE t.message IS NOT NULL ORDER BY t.zoid;
  BEGIN
    DECLARE CONTINUE HANDLER FOR SQLEXCEPTION
    BEGIN
      -- The error is condition 1 on MariaDB, but on MySQL 8 it can be the last one when
      -- the statement raised warnings too; both are read before anything clears them. A
      -- deadlock has rolled the whole transaction back: carrying on would commit the rest.
      GET DIAGNOSTICS v_count = NUMBER;
      GET DIAGNOSTICS CONDITION 1 v_errno = MYSQL_ERRNO;
      GET DIAGNOSTICS CONDITION v_count v_last_errno = MYSQL_ERRNO;
      IF v_errno IN (1205, 1206, 1213, 1317) OR v_last_errno IN (1205, 1206, 1213, 1317) THEN
        RESIGNAL;
      END IF;
      SET v_refused = TRUE;
    END;
    INSERT INTO object_json (zoid, tid, class_name, ghost_pickle, state, refs)
      SELECT t.zoid, COALESCE(p_tid, t.tid), CONVERT(t.class_name USING utf8mb4),
             t.ghost_pickle, CONVERT(t.state USING utf8mb4), CONVERT(t.refs USING utf8mb4)
      FROM temp_json t WHERE t.state IS NOT NULL ORDER BY t.zoid
      -- Never an older state over a newer row from a follower or rebuild (two writers at
      -- once: a follower and an enable). A commit's own rows (p_tid) always replace: its
      -- state is the current one even when its TID is older (a restore). The assignments
      -- run in order and see the row as updated so far, so tid, which the others compare
      -- with, comes last.
      -- object_json's columns are named in full: temp_json has columns of the same names.
      ON DUPLICATE KEY UPDATE
        class_name = IF(p_tid IS NOT NULL OR object_json.tid <= t.tid,
                        CONVERT(t.class_name USING utf8mb4), object_json.class_name),
        ghost_pickle = IF(p_tid IS NOT NULL OR object_json.tid <= t.tid, t.ghost_pickle,
                          object_json.ghost_pickle),
        state = IF(p_tid IS NOT NULL OR object_json.tid <= t.tid,
                   CONVERT(t.state USING utf8mb4), object_json.state),
        refs = IF(p_tid IS NOT NULL OR object_json.tid <= t.tid,
                  CONVERT(t.refs USING utf8mb4), object_json.refs),
        tid = IF(p_tid IS NOT NULL, p_tid, GREATEST(object_json.tid, t.tid));
  END;
  IF v_refused THEN
    CALL relstore_json_mirror_rows(p_tid);
  END IF;
  DELETE FROM temp_json;
END
