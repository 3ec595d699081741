-- History-free: the TID of the last commit that deleted an object. Deleting removes the
-- object's row, so polls cannot list the deletion; a poll that sees this TID move reports
-- that everything may have changed (src/backend/deletion_mark.h).

-- @hf
CREATE TABLE IF NOT EXISTS relstore_hf_deletion (
  id INTEGER PRIMARY KEY NOT NULL CHECK (id = 0),
  tid INTEGER NOT NULL
);
INSERT OR IGNORE INTO relstore_hf_deletion (id, tid) VALUES (0, 0);
