-- Applies one batch to the JSON mirror (docs/json-mirror.md): decoded rows, states that
-- could not be decoded, and objects that are gone. Each array has one element per entry.
-- p_guard as in relstore_json_mirror_rows: errors and deletions are then applied only if
-- they still match the object's current state.
-- A state that jsonb refuses (a jsonb limit, or characters the database encoding cannot
-- hold) must not fail a commit: the rows are then written one at a time, and the ones
-- refused become error entries with the server's message. The common path costs one
-- subtransaction.
-- @begin
CREATE OR REPLACE FUNCTION relstore_json_mirror_write(
  p_guard BOOLEAN, p_zoids BIGINT[], p_tids BIGINT[], p_class_names BYTEA[], p_ghosts BYTEA[],
  p_states BYTEA[], p_refs TEXT[], p_error_zoids BIGINT[], p_error_tids BIGINT[],
  p_errors TEXT[], p_deleted BIGINT[])
RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(p_deleted) > 0 THEN
    -- Gone: no current revision, or one without a state.
    DELETE FROM object_json j WHERE j.zoid = ANY (p_deleted) AND (NOT p_guard OR NOT EXISTS (
      SELECT 1 FROM relstore_current_state(j.zoid) cur WHERE cur.state IS NOT NULL));
    DELETE FROM object_json_error e WHERE e.zoid = ANY (p_deleted) AND (NOT p_guard OR NOT EXISTS (
      SELECT 1 FROM relstore_current_state(e.zoid) cur WHERE cur.state IS NOT NULL));
  END IF;
  IF cardinality(p_zoids) > 0 THEN
    BEGIN
      PERFORM relstore_json_mirror_rows(p_guard, p_zoids, p_tids, p_class_names, p_ghosts,
                                        p_states, p_refs);
    EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
      FOR i IN 1 .. cardinality(p_zoids) LOOP
        BEGIN
          PERFORM relstore_json_mirror_rows(p_guard, p_zoids[i:i], p_tids[i:i],
                                            p_class_names[i:i], p_ghosts[i:i], p_states[i:i],
                                            p_refs[i:i]);
        EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
          p_error_zoids := p_error_zoids || p_zoids[i];
          p_error_tids := p_error_tids || p_tids[i];
          p_errors := p_errors || ('not accepted by jsonb: ' || SQLERRM);
        END;
      END LOOP;
    END;
  END IF;
  IF cardinality(p_error_zoids) > 0 THEN
    WITH e AS (
      SELECT x.z, x.t, x.m FROM unnest(p_error_zoids, p_error_tids, p_errors) AS x (z, t, m)
      WHERE NOT p_guard OR EXISTS (
        SELECT 1 FROM relstore_current_state(x.z) cur
        WHERE cur.tid = x.t AND cur.state IS NOT NULL)),
    dropped AS (
      -- Not a newer row another writer put there meanwhile (a commit's own always goes).
      DELETE FROM object_json j USING e WHERE j.zoid = e.z AND (NOT p_guard OR j.tid <= e.t))
    INSERT INTO object_json_error AS o (zoid, tid, message)
      SELECT z, t, m FROM e ORDER BY z
    ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, message = excluded.message
      WHERE NOT p_guard OR o.tid <= excluded.tid;
  END IF;
END;
$$;
-- @end
