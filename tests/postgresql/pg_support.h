// Support for tests that need a PostgreSQL server (RELSTORE_TEST_POSTGRESQL_URI): a
// database of their own, and plain SQL access to inspect it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "adapters/postgresql/driver.h"

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
