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
