-- Per store connection: the records of the transaction being committed and the serials
-- it read with readCurrent. InnoDB, so that a rollback empties them as well.
CREATE TEMPORARY TABLE IF NOT EXISTS temp_store (
  zoid BIGINT NOT NULL PRIMARY KEY,
  prev_tid BIGINT NOT NULL,
  md5 CHAR(32) CHARACTER SET ascii,
  state LONGBLOB
) ENGINE = InnoDB;
CREATE TEMPORARY TABLE IF NOT EXISTS temp_read_current (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL
) ENGINE = InnoDB;
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
) ENGINE = InnoDB;
