-- The JSON mirror (json-mirror.md): object_json holds the decoded current state of every
-- object; relstore_json_mirror its mode and progress; object_json_error the current states
-- that could not be decoded. Usable with SQLite's JSON functions (json_extract, json_each).

CREATE TABLE IF NOT EXISTS object_json (
  zoid INTEGER PRIMARY KEY NOT NULL,
  tid INTEGER NOT NULL,
  class_name TEXT,
  ghost_pickle BLOB,
  state TEXT,
  refs TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS object_json_class_name ON object_json (class_name);
CREATE INDEX IF NOT EXISTS object_json_tid ON object_json (tid);

CREATE TABLE IF NOT EXISTS object_json_error (
  zoid INTEGER PRIMARY KEY NOT NULL,
  tid INTEGER NOT NULL,
  message TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS relstore_json_mirror (
  id INTEGER PRIMARY KEY NOT NULL CHECK (id = 0),
  mode TEXT NOT NULL DEFAULT 'off' CHECK (mode IN ('off', 'in-commit', 'follow')),
  last_tid INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO relstore_json_mirror (id) VALUES (0);

-- newt.db's names for the same rows.
CREATE VIEW IF NOT EXISTS newt AS
  SELECT zoid, class_name, ghost_pickle, state FROM object_json;
