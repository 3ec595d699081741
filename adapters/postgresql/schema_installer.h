// Detects, creates, upgrades and verifies the RelStorage schema in a PostgreSQL database,
// and installs relstore's server functions.
#pragma once

#include <string>

#include "adapters/postgresql/adapter.h"
#include "relstore/uri.h"
#include "schema/migrations.h"

namespace relstore::postgresql {

// Makes the database ready for use as `options` ask: creates the schema of an empty
// database (unless options.create is off or the storage is read-only), or checks an
// existing one, adopting a RelStorage-created database as the baseline migration and
// applying later migrations; then installs the relstore_* functions whose text changed.
// Every change happens in one transaction: on any error nothing is left half-created.
// Throws SchemaError when the database has no schema and may not get one, is in the other
// history mode, or is damaged.
struct SchemaFacts {
  bool keep_history = true;
  bool json_mirror = false;  // migration 0003's tables and the mirror functions are there
  // History-free database with relstore_hf_deletion (migration 0004).
  bool deletion_mark = false;
  bool conversion_note = false;  // relstore_conversion (migration 0007)
};
SchemaFacts install_schema(const Location& loc, const StorageOptions& options,
                           backend::Adapter& counter);

// "N" for the newest applied migration, or "RelStorage (no relstore_schema table)".
std::string schema_version(Conn& conn);

// Versions recorded in relstore_schema, ascending; empty when the table is missing.
std::vector<int> applied_versions(Conn& conn);

// Runs one migration's statements for the mode and records it, in one transaction.
void apply_one(Conn& conn, const Migration& m, bool keep_history);

// The names of relstore's server functions, in installation order.
const std::vector<std::string>& function_names();

}  // namespace relstore::postgresql
