-- relstore_json_mirror_write's way out when the server refuses a batch of rows: the rows
-- of temp_json one at a time, each refused one replaced by an error entry that carries
-- the server's message (and the object's old row removed).
CREATE PROCEDURE relstore_json_mirror_rows(IN p_tid BIGINT)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_done BOOLEAN DEFAULT FALSE;
  DECLARE v_zoid BIGINT;
  DECLARE v_tid BIGINT;
  DECLARE v_class LONGBLOB;
  DECLARE v_ghost LONGBLOB;
  DECLARE v_state LONGBLOB;
  DECLARE v_refs LONGBLOB;
  DECLARE v_refused BOOLEAN;
  DECLARE v_count INT;
  DECLARE v_errno INT;
  DECLARE v_last_errno INT;
  DECLARE v_sqlstate CHAR(5);
  DECLARE v_message TEXT CHARACTER SET utf8mb4;
  DECLARE v_last_message TEXT CHARACTER SET utf8mb4;
  DECLARE c CURSOR FOR
    SELECT zoid, COALESCE(p_tid, tid), class_name, ghost_pickle, state, refs FROM temp_json
    WHERE state IS NOT NULL ORDER BY zoid;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;

  OPEN c;
  read_rows: LOOP
    FETCH c INTO v_zoid, v_tid, v_class, v_ghost, v_state, v_refs;
    IF v_done THEN
      LEAVE read_rows;
    END IF;
    SET v_refused = FALSE;
    BEGIN
      DECLARE CONTINUE HANDLER FOR SQLEXCEPTION
      BEGIN
        -- As in relstore_json_mirror_write: the error may be the first or the last
        -- condition; the message is the error's, not a warning's.
        GET DIAGNOSTICS v_count = NUMBER;
        GET DIAGNOSTICS CONDITION 1 v_errno = MYSQL_ERRNO, v_message = MESSAGE_TEXT,
                                    v_sqlstate = RETURNED_SQLSTATE;
        GET DIAGNOSTICS CONDITION v_count v_last_errno = MYSQL_ERRNO,
                                          v_last_message = MESSAGE_TEXT;
        IF v_errno IN (1205, 1206, 1213, 1317) OR v_last_errno IN (1205, 1206, 1213, 1317) THEN
          RESIGNAL;
        END IF;
        IF v_sqlstate LIKE '01%' THEN
          SET v_message = v_last_message;
        END IF;
        SET v_refused = TRUE;
      END;
      INSERT INTO object_json (zoid, tid, class_name, ghost_pickle, state, refs)
        VALUES (v_zoid, v_tid, CONVERT(v_class USING utf8mb4), v_ghost,
                CONVERT(v_state USING utf8mb4), CONVERT(v_refs USING utf8mb4))
        ON DUPLICATE KEY UPDATE  -- as in relstore_json_mirror_write
          class_name = IF(p_tid IS NOT NULL OR tid <= v_tid, CONVERT(v_class USING utf8mb4),
                          class_name),
          ghost_pickle = IF(p_tid IS NOT NULL OR tid <= v_tid, v_ghost, ghost_pickle),
          state = IF(p_tid IS NOT NULL OR tid <= v_tid, CONVERT(v_state USING utf8mb4), state),
          refs = IF(p_tid IS NOT NULL OR tid <= v_tid, CONVERT(v_refs USING utf8mb4), refs),
          tid = IF(p_tid IS NOT NULL, p_tid, GREATEST(tid, v_tid));
    END;
    IF v_refused THEN
      DELETE FROM object_json WHERE zoid = v_zoid;
      INSERT INTO object_json_error (zoid, tid, message)
        VALUES (v_zoid, v_tid, CONCAT('not accepted by the server: ', v_message))
        ON DUPLICATE KEY UPDATE tid = v_tid,
          message = CONCAT('not accepted by the server: ', v_message);
    END IF;
  END LOOP;
  CLOSE c;
END
