-- Vote (design.md §4 step 3): takes the object locks and reports what stops the commit,
-- one row per problem. The records' OIDs and serials come as arrays (p_zoids,
-- p_prev_tids), or NULL when a large vote copied them into temp_store (relstore_records).
--   tid_not_after  a restore's TID is not after the newest finished one (o_committed)
--   read_stale     a readCurrent object is no longer at the serial the writer read
--   read_locked    a readCurrent object is locked by a transaction committing a change
--   write          a modified object's committed TID differs from the writer's serial;
--                  o_state carries the committed state for conflict resolution
-- The object locks are RelStorage's: row locks on the objects' current rows (current_object
-- history-preserving, object_state history-free), FOR UPDATE for objects being modified
-- and FOR SHARE NOWAIT for readCurrent, as its lock_objects_and_detect_conflicts takes
-- them, so that a RelStorage process and relstore writing one database exclude each other.
-- (RelStorage's locker also has advisory-lock queries, used only by its tests.) The
-- exclusive locks are taken in OID order and before the shared ones, which never wait: a
-- transaction waits only while it holds no shared lock, so readCurrent can never close a
-- deadlock cycle among relstore processes. Objects created by this transaction (prev_tid
-- 0) have no row to lock: their OIDs are new.
-- The records have no statistics (arrays, or a temporary table, which is never analyzed),
-- so a join with them may be planned as a hash join over all of object_state; the
-- committed rows are looked up with correlated subqueries instead, one index probe per
-- stored object. (Processes of relstore before 2026-11-30 call the overload without
-- p_zoids and p_prev_tids, which stays in databases they created.)

-- @hp
-- @begin
CREATE OR REPLACE FUNCTION relstore_lock_and_detect(
  p_zoids BIGINT[], p_prev_tids BIGINT[], p_read_oids BIGINT[], p_read_tids BIGINT[],
  p_check_conflicts BOOLEAN, p_forced_tid BIGINT)
RETURNS TABLE (o_kind TEXT, o_zoid BIGINT, o_committed BIGINT, o_given BIGINT, o_state BYTEA)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_zoid BIGINT;
  v_last BIGINT;
BEGIN
  IF p_forced_tid IS NOT NULL THEN
    v_last := relstore_last_tid();
    IF p_forced_tid <= v_last THEN
      RETURN QUERY SELECT 'tid_not_after', NULL::BIGINT, v_last, p_forced_tid, NULL::BYTEA;
      RETURN;
    END IF;
  END IF;
  IF cardinality(p_read_oids) > 0 THEN
    -- A stale readCurrent fails before any lock is taken.
    RETURN QUERY
      SELECT 'read_stale', x.zoid, x.committed, x.given, NULL::BYTEA
      FROM (SELECT r.zoid, r.tid AS given,
                   COALESCE((SELECT c.tid FROM current_object c WHERE c.zoid = r.zoid), 0)
                     AS committed
            FROM unnest(p_read_oids, p_read_tids) AS r (zoid, tid)) x
      WHERE x.committed <> x.given ORDER BY x.zoid LIMIT 1;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  -- The creation of the root has no row to lock, and no allocator hands its OID out: two
  -- processes creating it on an empty database at once (ZODB's DB() does) would both
  -- commit, the second overwriting the first. relstore's processes lock its creation with
  -- the advisory lock 0 (RelStorage's do not), so the second finds it and conflicts.
  PERFORM pg_advisory_xact_lock(0)
    FROM relstore_records(p_zoids, p_prev_tids, NULL, NULL) t
    WHERE t.zoid = 0 AND t.prev_tid = 0 LIMIT 1;
  -- One statement for the row locks, taken in OID order (the rows are locked as the sort
  -- hands them up). A restore (no conflict checks, every prev_tid 0) locks those of its
  -- objects that exist: it checks nothing, but must wait for a transaction that voted a
  -- change or a readCurrent of one.
  PERFORM 1 FROM current_object c
    WHERE c.zoid = ANY (ARRAY(
      SELECT t.zoid FROM relstore_records(p_zoids, p_prev_tids, NULL, NULL) t
      WHERE t.prev_tid <> 0 OR NOT p_check_conflicts))
    ORDER BY c.zoid
    FOR UPDATE;
  IF cardinality(p_read_oids) > 0 THEN
    -- NOWAIT raises lock_not_available at the first row another transaction holds; the
    -- block (a subtransaction) then lets go of the shared locks it took. All rows in one
    -- statement first (a row at a time took 70 ms for 10,000 objects); only when that
    -- fails, one at a time, so that v_zoid names the object (or, the other lock gone by
    -- then, every lock is taken after all).
    BEGIN
      PERFORM 1 FROM current_object c WHERE c.zoid = ANY (p_read_oids) ORDER BY c.zoid FOR SHARE NOWAIT;
    EXCEPTION WHEN lock_not_available THEN
      BEGIN
        FOR v_zoid IN SELECT DISTINCT r.zoid FROM unnest(p_read_oids) AS r (zoid) ORDER BY r.zoid
        LOOP
          PERFORM 1 FROM current_object c WHERE c.zoid = v_zoid FOR SHARE NOWAIT;
        END LOOP;
      EXCEPTION WHEN lock_not_available THEN
        RETURN QUERY SELECT 'read_locked', v_zoid, NULL::BIGINT, NULL::BIGINT, NULL::BYTEA;
        RETURN;
      END;
    END;
    -- Under the shared locks nobody can change them any more: check once more.
    RETURN QUERY
      SELECT 'read_stale', x.zoid, x.committed, x.given, NULL::BYTEA
      FROM (SELECT r.zoid, r.tid AS given,
                   COALESCE((SELECT c.tid FROM current_object c WHERE c.zoid = r.zoid), 0)
                     AS committed
            FROM unnest(p_read_oids, p_read_tids) AS r (zoid, tid)) x
      WHERE x.committed <> x.given ORDER BY x.zoid LIMIT 1;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  IF p_check_conflicts THEN
    RETURN QUERY
      SELECT 'write', x.zoid, x.committed, x.given,
             (SELECT s.state FROM object_state s WHERE s.zoid = x.zoid AND s.tid = x.committed)
      FROM (SELECT t.zoid, t.prev_tid AS given,
                   COALESCE((SELECT c.tid FROM current_object c WHERE c.zoid = t.zoid), 0)
                     AS committed
            FROM relstore_records(p_zoids, p_prev_tids, NULL, NULL) t) x
      WHERE x.committed <> x.given ORDER BY x.zoid;
  END IF;
END;
$$;
-- @end

-- @hf
-- @begin
CREATE OR REPLACE FUNCTION relstore_lock_and_detect(
  p_zoids BIGINT[], p_prev_tids BIGINT[], p_read_oids BIGINT[], p_read_tids BIGINT[],
  p_check_conflicts BOOLEAN, p_forced_tid BIGINT)
RETURNS TABLE (o_kind TEXT, o_zoid BIGINT, o_committed BIGINT, o_given BIGINT, o_state BYTEA)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_zoid BIGINT;
  v_last BIGINT;
BEGIN
  IF p_forced_tid IS NOT NULL THEN
    v_last := relstore_last_tid();
    IF p_forced_tid <= v_last THEN
      RETURN QUERY SELECT 'tid_not_after', NULL::BIGINT, v_last, p_forced_tid, NULL::BYTEA;
      RETURN;
    END IF;
  END IF;
  IF cardinality(p_read_oids) > 0 THEN
    -- A stale readCurrent fails before any lock is taken.
    RETURN QUERY
      SELECT 'read_stale', x.zoid, x.committed, x.given, NULL::BYTEA
      FROM (SELECT r.zoid, r.tid AS given,
                   COALESCE((SELECT o.tid FROM object_state o WHERE o.zoid = r.zoid), 0)
                     AS committed
            FROM unnest(p_read_oids, p_read_tids) AS r (zoid, tid)) x
      WHERE x.committed <> x.given ORDER BY x.zoid LIMIT 1;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  -- The creation of the root has no row to lock, and no allocator hands its OID out: two
  -- processes creating it on an empty database at once (ZODB's DB() does) would both
  -- commit, the second overwriting the first. relstore's processes lock its creation with
  -- the advisory lock 0 (RelStorage's do not), so the second finds it and conflicts.
  PERFORM pg_advisory_xact_lock(0)
    FROM relstore_records(p_zoids, p_prev_tids, NULL, NULL) t
    WHERE t.zoid = 0 AND t.prev_tid = 0 LIMIT 1;
  -- One statement for the row locks, taken in OID order (the rows are locked as the sort
  -- hands them up). A restore (no conflict checks, every prev_tid 0) locks those of its
  -- objects that exist: it checks nothing, but must wait for a transaction that voted a
  -- change or a readCurrent of one.
  PERFORM 1 FROM object_state c
    WHERE c.zoid = ANY (ARRAY(
      SELECT t.zoid FROM relstore_records(p_zoids, p_prev_tids, NULL, NULL) t
      WHERE t.prev_tid <> 0 OR NOT p_check_conflicts))
    ORDER BY c.zoid
    FOR UPDATE;
  IF cardinality(p_read_oids) > 0 THEN
    -- NOWAIT raises lock_not_available at the first row another transaction holds; the
    -- block (a subtransaction) then lets go of the shared locks it took. All rows in one
    -- statement first (a row at a time took 70 ms for 10,000 objects); only when that
    -- fails, one at a time, so that v_zoid names the object (or, the other lock gone by
    -- then, every lock is taken after all).
    BEGIN
      PERFORM 1 FROM object_state c WHERE c.zoid = ANY (p_read_oids) ORDER BY c.zoid FOR SHARE NOWAIT;
    EXCEPTION WHEN lock_not_available THEN
      BEGIN
        FOR v_zoid IN SELECT DISTINCT r.zoid FROM unnest(p_read_oids) AS r (zoid) ORDER BY r.zoid
        LOOP
          PERFORM 1 FROM object_state c WHERE c.zoid = v_zoid FOR SHARE NOWAIT;
        END LOOP;
      EXCEPTION WHEN lock_not_available THEN
        RETURN QUERY SELECT 'read_locked', v_zoid, NULL::BIGINT, NULL::BIGINT, NULL::BYTEA;
        RETURN;
      END;
    END;
    -- Under the shared locks nobody can change them any more: check once more.
    RETURN QUERY
      SELECT 'read_stale', x.zoid, x.committed, x.given, NULL::BYTEA
      FROM (SELECT r.zoid, r.tid AS given,
                   COALESCE((SELECT o.tid FROM object_state o WHERE o.zoid = r.zoid), 0)
                     AS committed
            FROM unnest(p_read_oids, p_read_tids) AS r (zoid, tid)) x
      WHERE x.committed <> x.given ORDER BY x.zoid LIMIT 1;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  IF p_check_conflicts THEN
    RETURN QUERY
      SELECT 'write', x.zoid, x.committed, x.given,
             (SELECT o.state FROM object_state o WHERE o.zoid = x.zoid)
      FROM (SELECT t.zoid, t.prev_tid AS given,
                   COALESCE((SELECT o.tid FROM object_state o WHERE o.zoid = t.zoid), 0)
                     AS committed
            FROM relstore_records(p_zoids, p_prev_tids, NULL, NULL) t) x
      WHERE x.committed <> x.given ORDER BY x.zoid;
  END IF;
END;
$$;
-- @end
