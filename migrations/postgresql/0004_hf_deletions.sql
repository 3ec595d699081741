-- History-free: the TID of the last commit that deleted an object. Deleting removes the
-- object's row, so polls cannot list the deletion; a poll that sees this TID move reports
-- that everything may have changed (src/backend/deletion_mark.h). Same table as SQLite's
-- migration 0003.

-- @hf
CREATE TABLE relstore_hf_deletion (
  id SMALLINT PRIMARY KEY NOT NULL CHECK (id = 0),
  tid BIGINT NOT NULL
);
INSERT INTO relstore_hf_deletion (id, tid) VALUES (0, 0);
