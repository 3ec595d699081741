-- History-free: the TID of the last commit that deleted an object. Deleting removes the
-- object's row, so polls cannot list the deletion; a poll that sees this TID move reports
-- that everything may have changed (src/backend/deletion_mark.h). Same table as SQLite's
-- migration 0003.

-- @hf
CREATE TABLE IF NOT EXISTS relstore_hf_deletion (
  id SMALLINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL
) ENGINE = InnoDB;
INSERT IGNORE INTO relstore_hf_deletion (id, tid) VALUES (0, 0);
