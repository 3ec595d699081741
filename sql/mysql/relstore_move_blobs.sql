-- Moves the blob chunks a vote uploaded into temp_blob_chunk to blob_chunk with the
-- commit's TID, after the objects' rows (relstore_finish calls it, in both modes, when the
-- vote set @relstore_blobs; commits without blobs do not pay for a look at the table).
CREATE PROCEDURE relstore_move_blobs(IN p_tid BIGINT)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
BEGIN
  INSERT INTO blob_chunk (zoid, tid, chunk_num, chunk)
    SELECT b.zoid, p_tid, b.chunk_num, b.chunk FROM temp_blob_chunk b
    ORDER BY b.zoid, b.chunk_num;
  DELETE FROM temp_blob_chunk;
  SET @relstore_blobs = NULL;
END
