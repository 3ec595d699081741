-- The JSON mirror's mode, read by every vote inside the vote's message (no round trip of
-- its own). The shared lock, held to the end of the transaction, keeps set_mirror_mode
-- (which takes it exclusively, before the commit lock) from changing the mode between
-- this vote and its finish, so a commit writes its mirror rows exactly when the mode it
-- commits under says so. The mode is read after the lock, in a statement of its own, so
-- it is the one committed by a change we waited for.
-- @begin
CREATE OR REPLACE FUNCTION relstore_json_mirror_mode() RETURNS TEXT
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(1919249523, 3);
  RETURN COALESCE((SELECT mode FROM relstore_json_mirror WHERE id = 0), 'off');
END;
$$;
-- @end
