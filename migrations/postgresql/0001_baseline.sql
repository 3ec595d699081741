-- Baseline: the schema RelStorage's PostgreSQL adapter creates (design.md §3): default
-- types (BIGINT ids, BYTEA states, BOOLEAN flags, CHAR(32) md5, large-object OID blob
-- chunks), the zoid_seq allocator, and the blob_chunk trigger that unlinks large objects.
-- Sections marked "-- @hf" / "-- @hp" apply to one history mode only; statements end with
-- ";" at the end of a line, except blocks between "-- @begin" and "-- @end".

-- @common
CREATE TABLE commit_row_lock (
  tid BIGINT PRIMARY KEY NOT NULL
);
INSERT INTO commit_row_lock (tid) VALUES (0);

-- OID blocks: value n hands out OIDs 16n-15 … 16n.
CREATE SEQUENCE IF NOT EXISTS zoid_seq;

-- @hp
CREATE TABLE "transaction" (
  tid BIGINT PRIMARY KEY NOT NULL,
  packed BOOLEAN DEFAULT FALSE NOT NULL,
  is_empty BOOLEAN DEFAULT FALSE NOT NULL,
  username BYTEA NOT NULL,
  description BYTEA NOT NULL,
  extension BYTEA
);
-- The sentinel lets object_state.prev_tid = 0 satisfy its foreign key.
INSERT INTO "transaction" (tid, username, description)
  VALUES (0, 'system'::bytea, 'special transaction for object creation'::bytea);

CREATE TABLE object_state (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL REFERENCES "transaction",
  prev_tid BIGINT NOT NULL REFERENCES "transaction",
  md5 CHAR(32),
  state_size BIGINT NOT NULL,
  state BYTEA,
  CONSTRAINT object_state_pk PRIMARY KEY (zoid, tid),
  CHECK (tid > 0),
  CHECK (state_size >= 0)
);
CREATE INDEX object_state_tid ON object_state (tid);
CREATE INDEX object_state_prev_tid ON object_state (prev_tid);

CREATE TABLE blob_chunk (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  chunk_num BIGINT NOT NULL,
  chunk OID NOT NULL,
  CONSTRAINT blob_chunk_pk PRIMARY KEY (zoid, tid, chunk_num),
  CONSTRAINT blob_chunk_fk FOREIGN KEY (zoid, tid)
    REFERENCES object_state (zoid, tid) ON DELETE CASCADE
);
CREATE INDEX blob_chunk_lookup ON blob_chunk (zoid, tid);

CREATE TABLE current_object (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  FOREIGN KEY (zoid, tid) REFERENCES object_state (zoid, tid)
);
CREATE INDEX current_object_tid ON current_object (tid);

CREATE TABLE object_ref (
  zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  to_zoid BIGINT NOT NULL,
  PRIMARY KEY (tid, zoid, to_zoid)
);
CREATE TABLE object_refs_added (
  tid BIGINT NOT NULL PRIMARY KEY
);
CREATE TABLE pack_object (
  zoid BIGINT PRIMARY KEY NOT NULL,
  keep BOOLEAN NOT NULL,
  keep_tid BIGINT NOT NULL,
  visited BOOLEAN DEFAULT FALSE NOT NULL
);
CREATE INDEX pack_object_keep_false ON pack_object (zoid) WHERE keep = false;
CREATE INDEX pack_object_keep_true ON pack_object (visited) WHERE keep = true;
CREATE TABLE pack_state (
  tid BIGINT NOT NULL,
  zoid BIGINT NOT NULL,
  PRIMARY KEY (tid, zoid)
);
CREATE TABLE pack_state_tid (
  tid BIGINT NOT NULL PRIMARY KEY
);
CREATE VIEW current_object_state AS
  SELECT zoid, tid, state FROM object_state JOIN current_object USING (zoid, tid);

-- @hf
CREATE TABLE object_state (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL,
  state_size BIGINT NOT NULL,
  state BYTEA,
  CHECK (tid > 0),
  CHECK (state_size >= 0)
);
CREATE INDEX object_state_tid ON object_state (tid);

CREATE TABLE blob_chunk (
  zoid BIGINT NOT NULL,
  chunk_num BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  chunk OID NOT NULL,
  CONSTRAINT blob_chunk_pk PRIMARY KEY (zoid, chunk_num),
  CONSTRAINT blob_chunk_fk FOREIGN KEY (zoid)
    REFERENCES object_state (zoid) ON DELETE CASCADE
);
CREATE INDEX blob_chunk_lookup ON blob_chunk (zoid);

CREATE TABLE object_ref (
  zoid BIGINT NOT NULL,
  to_zoid BIGINT NOT NULL,
  tid BIGINT NOT NULL,
  PRIMARY KEY (zoid, to_zoid)
);
CREATE TABLE object_refs_added (
  zoid BIGINT NOT NULL PRIMARY KEY,
  tid BIGINT NOT NULL
);
CREATE TABLE pack_object (
  zoid BIGINT PRIMARY KEY NOT NULL,
  keep BOOLEAN NOT NULL,
  keep_tid BIGINT NOT NULL,
  visited BOOLEAN DEFAULT FALSE NOT NULL
);
CREATE INDEX pack_object_keep_false ON pack_object (zoid) WHERE keep = false;
CREATE INDEX pack_object_keep_true ON pack_object (visited) WHERE keep = true;

-- @common
-- A blob is one large object referenced by one blob_chunk row (chunk_num 0); the large
-- object goes when the last row naming it is deleted (a cascade from object_state, pack,
-- an HF overwrite). RelStorage installs a function of this name for the same trigger and
-- replaces this text with its own when it opens the database; both do the same.
-- @begin
CREATE OR REPLACE FUNCTION blob_chunk_delete_trigger() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
DECLARE
  v_references BIGINT;
BEGIN
  SELECT COUNT(*) INTO v_references FROM blob_chunk WHERE chunk = OLD.chunk;
  IF v_references = 1 THEN
    PERFORM lo_unlink(OLD.chunk);
  END IF;
  RETURN OLD;
END;
$$;
-- @end
CREATE TRIGGER blob_chunk_delete BEFORE DELETE ON blob_chunk
  FOR EACH ROW EXECUTE PROCEDURE blob_chunk_delete_trigger();
