-- Baseline: the schema RelStorage 3/4 creates on MySQL (design.md §3; its newest DDL:
-- tables built from its schema objects use BIGINT UNSIGNED, those built from its
-- templates signed BIGINT), so that RelStorage opens a database relstore created.
-- MySQL commits every DDL statement at once, so each statement here is safe to run again
-- after an interrupted install: IF NOT EXISTS everywhere, indexes declared inside CREATE
-- TABLE (MySQL 8 has no CREATE INDEX IF NOT EXISTS), INSERT IGNORE for the fixed rows.
-- Sections marked "-- @hf" / "-- @hp" apply to one history mode only.

-- @common
CREATE TABLE IF NOT EXISTS commit_row_lock (
  tid BIGINT UNSIGNED PRIMARY KEY NOT NULL
) ENGINE = InnoDB;
INSERT IGNORE INTO commit_row_lock (tid) VALUES (0);

-- The OID allocator: each auto-increment value n is block n, OIDs 16n-15 … 16n.
CREATE TABLE IF NOT EXISTS new_oid (
  zoid BIGINT UNSIGNED PRIMARY KEY AUTO_INCREMENT NOT NULL
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS pack_object (
  zoid BIGINT UNSIGNED PRIMARY KEY NOT NULL,
  keep BOOLEAN NOT NULL,
  keep_tid BIGINT UNSIGNED NOT NULL,
  visited BOOLEAN DEFAULT FALSE NOT NULL,
  INDEX pack_object_keep_zoid (keep, zoid)
) ENGINE = InnoDB;

-- @hp
CREATE TABLE IF NOT EXISTS "transaction" (
  tid BIGINT UNSIGNED PRIMARY KEY NOT NULL,
  packed BOOLEAN DEFAULT FALSE NOT NULL,
  is_empty BOOLEAN DEFAULT FALSE NOT NULL,
  username BLOB NOT NULL,
  description BLOB NOT NULL,
  extension BLOB
) ENGINE = InnoDB;
INSERT IGNORE INTO "transaction" (tid, username, description)
  VALUES (0, _binary'system', _binary'special transaction for object creation');

-- RelStorage writes REFERENCES "transaction" on tid and prev_tid. MySQL ignores inline
-- references; MariaDB enforces them, and would refuse these (signed columns referring to
-- an unsigned one). Leaving them out gives the table RelStorage gets on MySQL.
CREATE TABLE IF NOT EXISTS object_state (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  prev_tid BIGINT NOT NULL,
  md5 CHAR(32) CHARACTER SET ascii,
  state_size BIGINT NOT NULL,
  state LONGBLOB,
  CONSTRAINT object_state_pk PRIMARY KEY (zoid, tid),
  INDEX object_state_tid (tid),
  INDEX object_state_prev_tid (prev_tid),
  CHECK (tid > 0),
  CHECK (state_size >= 0)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS blob_chunk (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  chunk_num BIGINT NOT NULL,
  chunk LONGBLOB NOT NULL,
  CONSTRAINT blob_chunk_pk PRIMARY KEY (zoid, tid, chunk_num),
  INDEX blob_chunk_lookup (zoid, tid),
  CONSTRAINT blob_chunk_fk FOREIGN KEY (zoid, tid)
    REFERENCES object_state (zoid, tid) ON DELETE CASCADE
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS current_object (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  INDEX current_object_tid (tid),
  FOREIGN KEY (zoid, tid) REFERENCES object_state (zoid, tid)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS object_ref (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  to_zoid BIGINT NOT NULL,
  PRIMARY KEY (tid, zoid, to_zoid)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS object_refs_added (
  tid BIGINT NOT NULL PRIMARY KEY
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS pack_state (
  tid BIGINT NOT NULL,
  zoid BIGINT NOT NULL,
  PRIMARY KEY (tid, zoid)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS pack_state_tid (
  tid BIGINT NOT NULL PRIMARY KEY
) ENGINE = InnoDB;

CREATE OR REPLACE SQL SECURITY INVOKER VIEW current_object_state AS
  SELECT zoid, tid, state FROM object_state JOIN current_object USING (zoid, tid);

-- @hf
CREATE TABLE IF NOT EXISTS object_state (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  state_size BIGINT NOT NULL,
  state LONGBLOB,
  INDEX object_state_tid (tid),
  CHECK (tid > 0),
  CHECK (state_size >= 0)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS blob_chunk (
  zoid BIGINT NOT NULL,
  chunk_num BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  chunk LONGBLOB NOT NULL,
  CONSTRAINT blob_chunk_pk PRIMARY KEY (zoid, chunk_num),
  INDEX blob_chunk_lookup (zoid),
  CONSTRAINT blob_chunk_fk FOREIGN KEY (zoid)
    REFERENCES object_state (zoid) ON DELETE CASCADE
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS object_ref (
  zoid BIGINT NOT NULL,
  to_zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  PRIMARY KEY (zoid, to_zoid)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS object_refs_added (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL
) ENGINE = InnoDB;
