// Detects, creates and verifies the RelStorage schema in a SQLite data directory.
#pragma once

#include <string>

#include "adapters/sqlite/adapter.h"
#include "relstore/uri.h"

namespace relstore::sqlite {

// Makes `loc` ready for use as `options` ask: creates the directory and schema of a new
// database (unless options.create is off or the storage is read-only), or checks an
// existing one, adopting a RelStorage-created database as the baseline migration.
// Returns whether the database preserves history. Throws SchemaError when the database
// is missing, foreign, or in the other history mode; changes nothing in that case.
bool install_schema(const Location& loc, const StorageOptions& options);

// "N" for the newest applied migration, or "RelStorage (no relstore_schema table)".
std::string schema_version(Db& db);

}  // namespace relstore::sqlite
