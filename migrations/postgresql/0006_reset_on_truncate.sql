-- RelStorage's zap_all (zodbconvert --clear with RelStorage writing) empties its tables with
-- TRUNCATE and leaves relstore's own rows as they were. The JSON mirror then kept the old
-- objects and the TID it had reached, so a reload at the source's older TIDs was never
-- mirrored while `json-mirror status` reported nothing pending; and the history-free
-- deletion record kept a TID above everything such a reload brings, so relstore refused
-- its restores and polls misread it. Emptying object_state now resets both, as relstore's
-- own zap_all does: the mirror to nothing mirrored, the deletion record to a zap's mark
-- (src/backend/deletion_mark.h) past every TID the table held, so that every instance's
-- next poll reports that everything changed.
--
-- A BEFORE trigger, to read the newest TID while the rows are still there. TRUNCATE fires
-- it for object_state also when the table is emptied through CASCADE (history-preserving:
-- TRUNCATE "transaction" CASCADE). A role that may empty object_state but not these
-- tables gets an error that says what to grant, and nothing is emptied.

-- @common
-- @begin
CREATE FUNCTION relstore_object_state_truncated() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  -- The tables of the truncated object_state's schema, whatever the session's search_path:
  -- with a schema per tenant, unqualified names could reach another tenant's mirror.
  EXECUTE format('DELETE FROM %I.object_json', TG_TABLE_SCHEMA);
  EXECUTE format('DELETE FROM %I.object_json_error', TG_TABLE_SCHEMA);
  EXECUTE format('UPDATE %I.relstore_json_mirror SET last_tid = 0 WHERE id = 0',
                 TG_TABLE_SCHEMA);
  IF to_regclass(format('%I.relstore_hf_deletion', TG_TABLE_SCHEMA)) IS NOT NULL THEN
    EXECUTE format('UPDATE %1$I.relstore_hf_deletion SET tid = -(GREATEST(COALESCE('
                   '(SELECT MAX(tid) FROM %1$I.object_state), 0), abs(tid)) + 1) WHERE id = 0',
                   TG_TABLE_SCHEMA);
  END IF;
  RETURN NULL;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE EXCEPTION 'emptying object_state must also reset relstore''s JSON mirror and '
                  'deletion record, and this role may not: %', SQLERRM
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'grant the role DELETE on object_json and object_json_error and UPDATE on '
                 'relstore_json_mirror and relstore_hf_deletion, or empty the database '
                 'with relstore convert --clear';
END;
$$;
-- @end
CREATE TRIGGER relstore_object_state_truncated
  BEFORE TRUNCATE ON object_state
  FOR EACH STATEMENT EXECUTE FUNCTION relstore_object_state_truncated();
