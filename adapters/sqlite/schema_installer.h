// Detects, creates and verifies the RelStorage schema in a SQLite data directory.
#pragma once

#include <string>

#include "adapters/sqlite/adapter.h"
#include "relstore/uri.h"
#include "schema/migrations.h"

namespace relstore::sqlite {

// Makes `loc` ready for use as `options` ask: creates the directory and schema of a new
// database (unless options.create is off or the storage is read-only), or checks an
// existing one, adopting a RelStorage-created database as the baseline migration.
// Returns whether the database preserves history. Throws SchemaError when the database
// is missing, foreign, or in the other history mode; changes nothing in that case.
bool install_schema(const Location& loc, const StorageOptions& options);

// "N" for the newest applied migration, or "RelStorage (no relstore_schema table)".
std::string schema_version(Db& db);

// Versions recorded in relstore_schema, ascending (empty without the table).
std::vector<int> applied_versions(Db& db);

// Runs one migration's statements for the mode and records it, in one write transaction.
void apply_one(Db& db, const Migration& m, bool keep_history);

}  // namespace relstore::sqlite
