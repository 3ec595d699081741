-- Vote, history-preserving: takes exclusive locks on the current_object rows of the
-- objects written, in OID order, then the readCurrent shared locks without waiting (the
-- locks RelStorage takes, so both can commit to one database at once), and returns one
-- result set (kind, zoid, tid, given, state, mode):
--   'T'  restore: p_forced_tid is not after the newest finished TID (in tid);
--   'L'  a readCurrent object is locked by another committer;
--   'R'  a readCurrent object changed: (zoid, current tid, tid read);
--   'C'  one row per object written: (zoid, committed tid, serial written, when p_check
--        and the two differ the committed state, and the JSON mirror's mode: 'off'
--        without the mirror's tables). The mode rides on these rows because a result
--        set of its own cost about 30 µs a vote; no rows (nothing stored): mode unknown.
-- p_read_current says whether temp_read_current has rows (the client knows; asking the
-- table would cost a statement).
CREATE PROCEDURE relstore_lock_and_detect(IN p_check BOOLEAN, IN p_read_current BOOLEAN,
                                          IN p_forced_tid BIGINT)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
proc: BEGIN
  DECLARE v_count BIGINT;
  DECLARE v_locked BOOLEAN DEFAULT FALSE;
  DECLARE v_wait BIGINT;
  DECLARE v_mode VARCHAR(16) DEFAULT 'off';
  DECLARE v_last BIGINT;

  -- The JSON mirror's mode, under a share lock held to the commit: a change of mode locks
  -- the row exclusively, so this commit writes its mirror rows exactly when the mode it
  -- commits under says so. Taken first, before the object locks, in the order
  -- set_mirror_mode takes its locks (mode, then commit lock).
  BEGIN
    DECLARE CONTINUE HANDLER FOR 1146 SET v_mode = 'off';  -- before migration 0002
    SELECT id INTO v_count FROM relstore_json_mirror_lock WHERE id = 0 LOCK IN SHARE MODE;
    SELECT mode INTO v_mode FROM relstore_json_mirror WHERE id = 0;
  END;

  -- A restore's TID must come after every finished one: polls ask for what is newer than
  -- what they saw, and would never report a commit at or before it.
  IF p_forced_tid IS NOT NULL THEN
    SELECT COALESCE(MAX(tid), 0) INTO v_last FROM "transaction";
    IF p_forced_tid <= v_last THEN
      SELECT 'T' AS kind, NULL AS zoid, v_last AS tid, p_forced_tid AS given, NULL AS state;
      LEAVE proc;
    END IF;
  END IF;

  IF p_read_current THEN
    -- The exclusive locks first, then the share locks, as RelStorage 3.5+ and relstore's
    -- PostgreSQL vote take them: a vote waits only while it holds no share lock, so a
    -- readCurrent cannot close a deadlock cycle (a vote holding a share lock on A while
    -- waiting for B, a committer holding B and waiting for A). temp_store holds the
    -- records in OID order (the client sends them sorted), and the locking SELECT at the
    -- end takes these rows again, already held.
    SELECT COUNT(*) INTO v_count
      FROM temp_store t STRAIGHT_JOIN current_object c ON c.zoid = t.zoid
      FOR UPDATE;
    SET v_wait = @@SESSION.innodb_lock_wait_timeout;
    BEGIN
      -- Shared locks never wait: a row held exclusively belongs to an object being
      -- committed, so it is about to change. MySQL 8 says FOR SHARE NOWAIT; MariaDB
      -- refuses NOWAIT inside procedures, so the session's lock wait drops to 0 (fail at
      -- once) around the statement instead. Failure is 1205 (MariaDB) or 3572 (MySQL 8).
      DECLARE CONTINUE HANDLER FOR 1205, 3572 SET v_locked = TRUE;
      DECLARE EXIT HANDLER FOR SQLEXCEPTION
      BEGIN
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
      END;
      SET SESSION innodb_lock_wait_timeout = {SHARE_WAIT};
      SELECT COUNT(*) INTO v_count
        FROM temp_read_current r STRAIGHT_JOIN current_object c ON c.zoid = r.zoid
        {SHARE_LOCK};
    END;
    SET SESSION innodb_lock_wait_timeout = v_wait;
    IF v_locked THEN
      SELECT 'L' AS kind, NULL AS zoid, NULL AS tid, NULL AS given, NULL AS state;
      LEAVE proc;
    END IF;
    IF EXISTS (SELECT 1 FROM temp_read_current r LEFT JOIN current_object c ON c.zoid = r.zoid
               WHERE COALESCE(c.tid, 0) <> r.tid) THEN
      SELECT 'R' AS kind, r.zoid, COALESCE(c.tid, 0) AS tid, r.tid AS given, NULL AS state
        FROM temp_read_current r LEFT JOIN current_object c ON c.zoid = r.zoid
        WHERE COALESCE(c.tid, 0) <> r.tid ORDER BY r.zoid LIMIT 1;
      LEAVE proc;
    END IF;
    DELETE FROM temp_read_current;  -- checked; nothing later needs it
  END IF;


  -- One statement takes the exclusive locks and reads the committed TIDs (a locking read
  -- sees the newest commit). temp_store drives the join and is read in primary key order,
  -- so rows are locked in OID order and two committers cannot deadlock on them. The
  -- committed state, read only for a conflict, comes from a subquery, which the locking
  -- clause need not cover (MySQL 8 documents that it does not): a committed revision never
  -- changes, and the current_object row that names it is locked.
  SELECT 'C' AS kind, t.zoid, COALESCE(c.tid, 0) AS tid, t.prev_tid AS given,
         IF(p_check AND COALESCE(c.tid, 0) <> t.prev_tid,
            (SELECT s.state FROM object_state s WHERE s.zoid = c.zoid AND s.tid = c.tid),
            NULL) AS state,
         v_mode AS mode
    FROM temp_store t LEFT JOIN current_object c ON c.zoid = t.zoid
    ORDER BY t.zoid
    FOR UPDATE;
END
