// The MySQL server tests' fixture: the server RELSTORE_TEST_MYSQL_URI names, and databases
// made empty for one test.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "adapters/mysql/adapter.h"
#include "relstore/storage.h"
#include "relstore/uri.h"

namespace relstore::mysql::testing {

class MysqlServerTest : public ::testing::Test {
 protected:
  // Skips without a server, or fails when RELSTORE_TEST_REQUIRE names mysql.
  void SetUp() override;

  // The URI of database <base>_<suffix>, dropped and created again, with `query` appended.
  std::string fresh_database(const std::string& suffix, const std::string& query = "");
  // The URI of the server with another database name, user or password (not created).
  std::string uri_for(const std::string& database, const std::string& user = "",
                      const std::string& password = "") const;
  // A connection as the test user to `database` (the base database when empty), with
  // relstore's admin session settings (ANSI_QUOTES, utf8mb4).
  std::unique_ptr<Connection> connect(const std::string& database = "");
  // Runs every ";"-terminated statement of a file under tests/fixtures on `conn`.
  void load_fixture(Connection& conn, const std::string& name);

  StorageUri base_;
};

// Commits `states` in one transaction (serial none unless `serials` gives one); returns
// the TID.
Tid commit_states(StorageInstance& inst, const std::map<Oid, Bytes>& states,
                  const std::map<Oid, Tid>& serials = {});
// Polls `sql` on `conn` until it returns "1", for up to 10 s; false if it never did.
bool eventually_one(Connection& conn, const std::string& sql);

// The database name of a mysql: URI.
std::string db_of(const std::string& uri);
// The first column of the first row `sql` returns on `conn`, as text ("NULL" for none).
std::string scalar(Connection& conn, const std::string& sql);

// Commits `data` to `oid` in a transaction of its own (serial none: a new object); returns
// the TID.
Tid commit_one(StorageInstance& inst, Oid oid, std::optional<Tid> serial, const std::string& data);

}  // namespace relstore::mysql::testing
