// Test databases on the PostgreSQL and MySQL servers the environment names
// (RELSTORE_TEST_POSTGRESQL_URI, RELSTORE_TEST_MYSQL_URI; see scripts/db-servers.sh).
#pragma once

#include <optional>
#include <string>

#include "relstore/uri.h"

namespace relstore::testing {

// The environment's URI for a server backend, or none when it names no server or this
// build has no such backend.
std::optional<std::string> server_base_uri(Scheme scheme);

// True when RELSTORE_TEST_REQUIRE (comma-separated) names the backend or "all": a missing
// server is then a failure, not a skip.
bool server_required(Scheme scheme);

// The URI of database `<base database><suffix>` on that server, with `history=` set for
// the mode, creating the database when it does not exist (the test role may create
// databases). A database keeps one mode for its life, so callers use a suffix per mode.
std::string server_database_uri(Scheme scheme, const std::string& suffix, bool keep_history);

}  // namespace relstore::testing
