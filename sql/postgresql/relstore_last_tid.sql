-- The newest finished TID, which a restore's TID must come after (design.md §2): a commit
-- at or before it would be one that polls, which ask for rows newer than what they saw,
-- never report. History-free, a deletion of the object with the newest row took that
-- row away: the deletion's TID counts too (a database migrated to relstore_hf_deletion).

-- @hp
-- @begin
CREATE OR REPLACE FUNCTION relstore_last_tid() RETURNS BIGINT
LANGUAGE sql STABLE AS $$
  SELECT COALESCE(MAX(tid), 0) FROM "transaction";
$$;
-- @end

-- @hf
-- @begin
CREATE OR REPLACE FUNCTION relstore_last_tid() RETURNS BIGINT
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_last BIGINT;
BEGIN
  SELECT COALESCE(MAX(tid), 0) INTO v_last FROM object_state;
  IF to_regclass('relstore_hf_deletion') IS NOT NULL THEN
    v_last := GREATEST(v_last, COALESCE(
      (SELECT d.tid FROM relstore_hf_deletion d WHERE d.id = 0), 0));
  END IF;
  RETURN v_last;
END;
$$;
-- @end
