-- Per store connection: the records of the transaction being committed and the serials
-- it read with readCurrent. {TEMP_ENGINE} is Aria on MariaDB and MyISAM on MySQL (InnoDB
-- when the server disables MyISAM), not InnoDB by choice: MariaDB's InnoDB left the rows
-- a DELETE removed from a temporary table in place, so each commit of a long-lived
-- connection scanned more of them (after 10,000 rows had passed through temp_store, a
-- 1-object commit took three times as long). Aria and MyISAM empty a table on DELETE but
-- ignore ROLLBACK, so a store connection's rollback deletes their rows itself
-- (open_connection).
CREATE TEMPORARY TABLE IF NOT EXISTS temp_store (
  zoid BIGINT NOT NULL PRIMARY KEY,
  prev_tid BIGINT NOT NULL,
  md5 CHAR(32) CHARACTER SET ascii,
  state LONGBLOB
) ENGINE = {TEMP_ENGINE};
-- An object read at two serials is two rows (one of them is stale, which the check finds).
CREATE TEMPORARY TABLE IF NOT EXISTS temp_read_current (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  PRIMARY KEY (zoid, tid)
) ENGINE = {TEMP_ENGINE};
-- Blob chunks of the transaction being committed (relstore_finish gives them its TID).
CREATE TEMPORARY TABLE IF NOT EXISTS temp_blob_chunk (
  zoid BIGINT NOT NULL,
  chunk_num BIGINT NOT NULL,
  chunk LONGBLOB NOT NULL,
  PRIMARY KEY (zoid, chunk_num)
) ENGINE = {TEMP_ENGINE};
-- JSON mirror entries on their way into object_json (relstore_json_mirror_write): a
-- decoded row (state set), an undecodable state (message set) or a removal (neither).
-- Binary columns, converted on the way in, so that whatever the server refuses is refused
-- there, where relstore_json_mirror_write can turn it into an error entry.
CREATE TEMPORARY TABLE IF NOT EXISTS temp_json (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  class_name BLOB,
  ghost_pickle LONGBLOB,
  state LONGBLOB,
  refs LONGBLOB,
  message BLOB
) ENGINE = {TEMP_ENGINE};
