// Support for tests that need a PostgreSQL server (RELSTORE_TEST_POSTGRESQL_URI): a
// database of their own, and plain SQL access to inspect it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/postgresql/driver.h"
#include "relstore/storage.h"

namespace relstore::pgtest {

// The server URI, or none when the environment names no server.
std::optional<std::string> server_uri();
// True when RELSTORE_TEST_REQUIRE (comma-separated) names postgresql (or "all").
bool server_required();

// `uri` (a postgresql:// URI) with its database replaced by `database` and `query` (may be
// empty) as its query string.
std::string uri_with(const std::string& uri, const std::string& database,
                     const std::string& query = "");

// A database that exists for one test: <server db>_t_<name>, dropped first if a failed
// run left it behind, and dropped again at the end.
class TestDatabase {
 public:
  explicit TestDatabase(const std::string& name);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& name() const { return name_; }
  // Its URI with `query` (e.g. "history=free").
  std::string uri(const std::string& query = "") const;
  // A new plain connection to it.
  std::unique_ptr<postgresql::Conn> connect() const;
  // Runs `sql` (simple-query protocol) on a connection kept for the test.
  void exec(const std::string& sql);
  // The first column of the first row of the last result, as text; "" when there is none.
  std::string scalar(const std::string& sql);

 private:
  std::string name_;
  std::unique_ptr<postgresql::Conn> conn_;
};

// Runs SQL on the server's own database (CREATE/DROP DATABASE).
void exec_on_server(const std::string& sql);

// Tests run in both modes; the parameter says history-preserving.
class ModeTest : public ::testing::TestWithParam<bool> {
 protected:
  bool hp() const { return GetParam(); }
  // The query string that opens a database in the mode.
  std::string query() const { return hp() ? "history=preserving" : "history=free"; }
  // A TestDatabase name for the mode: `stem` with "_hp" or "_hf".
  std::string db_name(const std::string& stem) const { return stem + (hp() ? "_hp" : "_hf"); }
};

// Names the instantiations of a ModeTest "hf" and "hp".
std::string mode_name(const ::testing::TestParamInfo<bool>& info);

// The serials of the objects a test writes, by OID (Tid(0): not created yet).
using Serials = std::map<uint64_t, Tid>;

// OIDs 1 … n, none of them created yet.
Serials new_objects(uint64_t n);
// One transaction storing `data` into each of `oids` at its serial; they move to the new
// TID, which is returned.
Tid store_all(StorageInstance& inst, Serials& serials, const std::vector<uint64_t>& oids,
              const std::string& data);
// The same for every object of `serials`.
Tid update_all(StorageInstance& inst, Serials& serials, const std::string& data);

}  // namespace relstore::pgtest

// Skips the test when no server is configured, or fails it when one is required.
#define RELSTORE_NEED_POSTGRESQL()                                                       \
  do {                                                                                   \
    if (!::relstore::pgtest::server_uri()) {                                             \
      if (::relstore::pgtest::server_required()) {                                       \
        FAIL() << "postgresql is required (RELSTORE_TEST_REQUIRE) but "                  \
                  "RELSTORE_TEST_POSTGRESQL_URI is not set";                             \
      }                                                                                  \
      GTEST_SKIP() << "postgresql unavailable: RELSTORE_TEST_POSTGRESQL_URI is not set"; \
    }                                                                                    \
  } while (0)
