// The JSON mirror's tables on SQLite (migration 0002): reads and guarded writes.
#pragma once

#include <optional>

#include "adapters/sqlite/driver.h"
#include "backend/adapter.h"

namespace relstore::sqlite::json_mirror {

// The mode recorded in relstore_json_mirror; off when the table does not exist.
MirrorMode read_mode(Db& db);

// In-commit rows of a commit, inside the committing transaction (the write lock is held).
void write_in_commit(Db& db, const mirror::Batch& batch, Tid tid);

backend::MirrorState state(Db& db, bool keep_history);
void set_mode(Db& db, MirrorMode mode);
backend::MirrorChanges changes(Db& db, bool keep_history, Tid since, size_t limit);
std::vector<Oid> orphans(Db& db, bool keep_history, size_t limit);
void apply(Db& db, bool keep_history, const mirror::Batch& batch,
           std::optional<mirror::Advance> advance);
void clear(Db& db);
// mirror::settle_sql in a write transaction (SQLite's write lock is the commit lock).
void settle(Db& db, bool keep_history);
// Empties the mirror and resets its progress inside the caller's transaction (zap_all);
// nothing when the database has no mirror tables.
void forget(Db& db);

}  // namespace relstore::sqlite::json_mirror
