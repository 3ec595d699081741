-- The JSON mirror (docs/json-mirror.md): object_json holds the decoded current state of
-- every object, relstore_json_mirror its mode and progress, object_json_error the current
-- states that could not be decoded. Same tables and meaning as SQLite's migration 0002,
-- with MySQL's types: state and refs JSON (on MariaDB an alias of LONGTEXT utf8mb4_bin
-- with a JSON_VALID check). Like every MySQL migration, each statement is safe to run
-- again: MySQL commits DDL at once, so an interrupted run is completed by the next.

-- @common
CREATE TABLE IF NOT EXISTS object_json (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  class_name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  ghost_pickle BLOB,
  state JSON,
  refs JSON NOT NULL,
  INDEX object_json_class_name (class_name),
  INDEX object_json_tid (tid)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS object_json_error (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  message TEXT CHARACTER SET utf8mb4 NOT NULL
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS relstore_json_mirror (
  id SMALLINT NOT NULL PRIMARY KEY,
  mode VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'off',
  last_tid BIGINT NOT NULL DEFAULT 0,
  CHECK (id = 0),
  CHECK (mode IN ('off', 'in-commit', 'follow'))
) ENGINE = InnoDB;
INSERT IGNORE INTO relstore_json_mirror (id) VALUES (0);

-- The mode's lock, apart from the row above so that commits can move last_tid: every vote
-- share-locks this row before it reads the mode and keeps the lock to its commit, and a
-- change of mode locks it exclusively, so no commit straddles a change.
CREATE TABLE IF NOT EXISTS relstore_json_mirror_lock (
  id SMALLINT NOT NULL PRIMARY KEY,
  CHECK (id = 0)
) ENGINE = InnoDB;
INSERT IGNORE INTO relstore_json_mirror_lock (id) VALUES (0);

-- newt.db's names for the same rows.
CREATE OR REPLACE SQL SECURITY INVOKER VIEW newt AS
  SELECT zoid, class_name, ghost_pickle, state FROM object_json;
