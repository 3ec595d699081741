-- Baseline: the schema RelStorage's SQLite adapter creates (design.md §3), plus the
-- relstore_schema table. Sections marked "-- @hf" / "-- @hp" apply to one history mode only.
-- Statements end with ";" at the end of a line.

-- @common
CREATE TABLE IF NOT EXISTS commit_row_lock (
  tid INTEGER PRIMARY KEY NOT NULL
);
INSERT OR IGNORE INTO commit_row_lock (tid) VALUES (0);

-- @hp
CREATE TABLE "transaction" (
  tid INTEGER PRIMARY KEY NOT NULL,
  packed INTEGER DEFAULT FALSE NOT NULL,
  is_empty INTEGER DEFAULT FALSE NOT NULL,
  username BLOB NOT NULL,
  description BLOB NOT NULL,
  extension BLOB
);
INSERT INTO "transaction" (tid, username, description)
  VALUES (0, CAST('system' AS BLOB), CAST('special transaction for object creation' AS BLOB));

CREATE TABLE object_state (
  zoid INTEGER NOT NULL,
  tid INTEGER NOT NULL REFERENCES "transaction",
  prev_tid INTEGER NOT NULL REFERENCES "transaction",
  md5 BLOB,
  state_size BIGINT NOT NULL,
  state BLOB,
  CONSTRAINT object_state_pk PRIMARY KEY (zoid, tid),
  CHECK (tid > 0),
  CHECK (state_size >= 0)
);
CREATE INDEX object_state_tid ON object_state (tid);
CREATE INDEX object_state_prev_tid ON object_state (prev_tid);

CREATE TABLE blob_chunk (
  zoid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  chunk_num INTEGER NOT NULL,
  chunk BLOB NOT NULL,
  CONSTRAINT blob_chunk_pk PRIMARY KEY (zoid, tid, chunk_num),
  CONSTRAINT blob_chunk_fk FOREIGN KEY (zoid, tid)
    REFERENCES object_state (zoid, tid) ON DELETE CASCADE
);
CREATE INDEX blob_chunk_lookup ON blob_chunk (zoid, tid);

CREATE TABLE current_object (
  zoid INTEGER NOT NULL PRIMARY KEY,
  tid INTEGER NOT NULL,
  FOREIGN KEY (zoid, tid) REFERENCES object_state (zoid, tid)
);
CREATE INDEX current_object_tid ON current_object (tid);

CREATE TABLE object_ref (
  zoid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  to_zoid INTEGER NOT NULL,
  PRIMARY KEY (tid, zoid, to_zoid)
);
CREATE TABLE object_refs_added (
  tid INTEGER NOT NULL PRIMARY KEY
);
CREATE TABLE pack_object (
  zoid INTEGER PRIMARY KEY NOT NULL,
  keep INTEGER NOT NULL,
  keep_tid INTEGER NOT NULL,
  visited INTEGER DEFAULT FALSE NOT NULL
);
CREATE INDEX pack_object_keep_zoid ON pack_object (keep, zoid);
CREATE TABLE pack_state (
  tid INTEGER NOT NULL,
  zoid INTEGER NOT NULL,
  PRIMARY KEY (tid, zoid)
);
CREATE TABLE pack_state_tid (
  tid INTEGER NOT NULL PRIMARY KEY
);
CREATE VIEW current_object_state AS
  SELECT zoid, tid, state FROM object_state JOIN current_object USING (zoid, tid);

-- @hf
CREATE TABLE object_state (
  zoid INTEGER NOT NULL PRIMARY KEY,
  tid INTEGER NOT NULL,
  state_size BIGINT NOT NULL,
  state BLOB,
  CHECK (tid > 0),
  CHECK (state_size >= 0)
);
CREATE INDEX object_state_tid ON object_state (tid);

CREATE TABLE blob_chunk (
  zoid INTEGER NOT NULL,
  chunk_num INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  chunk BLOB NOT NULL,
  CONSTRAINT blob_chunk_pk PRIMARY KEY (zoid, chunk_num),
  CONSTRAINT blob_chunk_fk FOREIGN KEY (zoid)
    REFERENCES object_state (zoid) ON DELETE CASCADE
);
CREATE INDEX blob_chunk_lookup ON blob_chunk (zoid);

CREATE TABLE object_ref (
  zoid INTEGER NOT NULL,
  to_zoid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  PRIMARY KEY (zoid, to_zoid)
);
CREATE TABLE object_refs_added (
  zoid INTEGER NOT NULL PRIMARY KEY,
  tid INTEGER NOT NULL
);
CREATE TABLE pack_object (
  zoid INTEGER PRIMARY KEY NOT NULL,
  keep INTEGER NOT NULL,
  keep_tid INTEGER NOT NULL,
  visited INTEGER DEFAULT FALSE NOT NULL
);
CREATE INDEX pack_object_keep_zoid ON pack_object (keep, zoid);
