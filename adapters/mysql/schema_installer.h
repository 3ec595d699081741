// Detects, creates and verifies the RelStorage schema in a MySQL/MariaDB database, and
// installs relstore's stored procedures.
#pragma once

#include <string>
#include <vector>

#include "adapters/mysql/adapter.h"
#include "relstore/uri.h"
#include "schema/migrations.h"

namespace relstore::mysql {

// Makes the database `settings` names ready for use as `options` ask: creates the schema
// and procedures of an empty database (unless options.create is off or the storage is
// read-only), or checks an existing one, adopting a RelStorage-created database as the
// baseline migration. Fills settings.server and settings.keep_history. Throws SchemaError
// when the database is foreign, has no schema or is in the other history mode, changing
// nothing; a schema creation that fails half-way removes what it created.
void install_schema(Settings& settings, const StorageOptions& options);

// The server's flavour, version, packet limit and disabled engines; throws SchemaError for
// a server relstore does not support.
ServerInfo server_info(Connection& conn);

// "N" for the newest applied migration, or "RelStorage (no relstore_schema table)".
std::string schema_version(Connection& conn);

// Versions recorded in relstore_schema, ascending; empty when the table is missing.
std::vector<int> applied_versions(Connection& conn);

// Runs one migration's statements for the mode on an admin connection and records it.
// MySQL commits DDL as it goes, so migrations are written to be safe to run again.
void apply_one(Connection& conn, const Migration& m, bool keep_history);

}  // namespace relstore::mysql
