-- Applies a follow or rebuild batch waiting in temp_json (rows and error entries with the
-- TIDs of the states they were decoded from, read from a snapshot that may be old by now)
-- and commits. An entry is kept only if its state is still the object's current one, a
-- removal only if the object is still gone, so a batch never overwrites what a later
-- commit wrote. In in-commit mode commits write rows too: the commit lock keeps them out
-- while the batch goes in; the share lock on the mode keeps the mode as read. Then
-- last_tid moves from p_mirrored_from up to p_mirrored_to when given, and only if it is
-- still p_mirrored_from: a rebuild or zap that reset it meanwhile wins (mirror::Advance);
-- and never past the newest TID the database holds (a batch read before a zap, from 0,
-- cannot tell the zap's reset from its own start).
-- (Named apart from relstore_json_mirror_apply, its one-argument predecessor, which
-- MySQL cannot overload: followers of older relstore versions keep working with theirs.)
CREATE PROCEDURE relstore_json_mirror_apply_batch(IN p_mirrored_from BIGINT,
                                                  IN p_mirrored_to BIGINT)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_lock BIGINT;
  DECLARE v_mode VARCHAR(16);
  SELECT id INTO v_lock FROM relstore_json_mirror_lock WHERE id = 0 LOCK IN SHARE MODE;
  SELECT mode INTO v_mode FROM relstore_json_mirror WHERE id = 0;
  IF v_mode = 'in-commit' THEN
    SELECT tid INTO v_lock FROM commit_row_lock WHERE tid = 0 FOR UPDATE;
  END IF;
  -- Entries whose state is no longer current are marked (tid -1), then dropped. An UPDATE
  -- reads the other tables without locks; a DELETE with the same subquery would take
  -- shared locks on their rows and wait for the exclusive ones of a commit that voted and
  -- now waits for the commit lock this batch holds: a deadlock. Under the commit lock the
  -- plain read is exact.
  UPDATE temp_json SET tid = -1
    WHERE (((state IS NOT NULL OR message IS NOT NULL)
         AND NOT EXISTS (SELECT 1 FROM object_state o WHERE o.zoid = temp_json.zoid
                         AND o.tid = temp_json.tid AND o.state IS NOT NULL))
       OR (state IS NULL AND message IS NULL
         AND EXISTS (SELECT 1 FROM object_state o
                     WHERE o.zoid = temp_json.zoid AND o.state IS NOT NULL)));
  DELETE FROM temp_json WHERE tid = -1;
  CALL relstore_json_mirror_write(NULL);
  IF p_mirrored_to IS NOT NULL THEN
    UPDATE relstore_json_mirror SET last_tid = GREATEST(last_tid, p_mirrored_to)
      WHERE id = 0 AND last_tid = p_mirrored_from
        AND p_mirrored_to <= (SELECT COALESCE(MAX(tid), 0) FROM object_state);
  END IF;
  COMMIT;
END
