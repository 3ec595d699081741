// Turning committed states into object_json rows (the part shared by every dialect).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "relstore/pickle.h"
#include "relstore/types.h"

namespace relstore::mirror {

struct Row {
  Oid oid;
  Tid tid;  // of the state (follow, rebuild); the commit's TID for in-commit rows
  std::string class_name;
  Bytes ghost_pickle;
  std::string json;
  std::vector<Oid> refs;
};

struct Error {
  Oid oid;
  Tid tid;
  std::string message;
};

// How a follow or rebuild batch moves the mirror's progress: from the last_tid it started
// at to `to`. Applied only if last_tid is still `from`: a rebuild or zap that reset it
// meanwhile (or another writer that moved it) wins, and the next batch starts from there.
struct Advance {
  Tid from;
  Tid to;
};

// Moves last_tid to the database's newest TID when every current state newer than it is
// mirrored (a row or an error entry with its TID; no row for a deleted object). Run under
// the commit lock at the end of `enable`: a commit that lands between the catch-up's last
// snapshot and its write has mirrored itself, yet the in-commit rule ("nothing newer than
// last_tid but me") would keep last_tid below it for good. Standard SQL for all three
// dialects (MySQL with ANSI_QUOTES).
const char* settle_sql(bool keep_history);

// What one batch changes in the mirror.
struct Batch {
  std::vector<Row> rows;
  std::vector<Error> errors;
  std::vector<std::pair<Oid, Tid>> deletes;  // objects absent at that TID
  bool empty() const { return rows.empty() && errors.empty() && deletes.empty(); }
  void clear() {
    rows.clear();
    errors.clear();
    deletes.clear();
  }
};

// Decodes one state into the batch: a row, an error (logged with the zoid, never thrown:
// a record that cannot be decoded must not fail a commit), or a delete for no state.
// `json_options` carries dialect needs (PostgreSQL's jsonb refuses NUL characters).
void add_state(Oid oid, Tid tid, const std::optional<Bytes>& state, RecordDecoder& decoder,
               const DecodeOptions& json_options, Batch& out);

// "[1,2,3]" and "{1,2,3}" (PostgreSQL array literal) forms of a refs list.
std::string refs_json(const std::vector<Oid>& refs);
std::string refs_pg_array(const std::vector<Oid>& refs);

}  // namespace relstore::mirror
