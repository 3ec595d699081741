// The databases the JSON mirror tests run on: SQLite always, PostgreSQL and MySQL when the
// environment names a server (RELSTORE_TEST_POSTGRESQL_URI, RELSTORE_TEST_MYSQL_URI), each
// in both history modes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "relstore/uri.h"
#include "support/temp_dir.h"

namespace relstore::mirror_test {

struct Backend {
  Scheme scheme;
  bool keep_history;
};
std::vector<Backend> backends();
std::string backend_name(const Backend& b);  // "sqlite_hf", "postgresql_hp", …

// Why the backend cannot run here, or none when it can.
std::optional<std::string> unavailable(const Backend& b);
// Whether RELSTORE_TEST_REQUIRE makes an unavailable backend a failure.
bool required(const Backend& b);

// An empty database of the backend, with the mirror off, for the test `name`: a SQLite
// directory under `dir`, or a server database of the test's own (created once, emptied
// with zap_all before every test).
std::string empty_database(const Backend& b, const testing::TempDir& dir, const std::string& name);

// empty_database for the running test, with a `relstore sample` tree of `objects` objects.
std::string sample_database(const Backend& b, const testing::TempDir& dir, uint64_t objects,
                            uint64_t seed);

// Runs `sql` (one statement; a write commits) on the database of `uri` and returns every
// row as text ("NULL" for NULL). Throws StorageError when the statement fails.
using Rows = std::vector<std::vector<std::string>>;
Rows query(const std::string& uri, const std::string& sql);

}  // namespace relstore::mirror_test

// In SetUp or a test body: skips the test when its backend is unavailable, or fails it
// when the backend is required.
#define RELSTORE_NEED_BACKEND(b)                                                                \
  do {                                                                                          \
    if (auto why = ::relstore::mirror_test::unavailable(b)) {                                   \
      if (::relstore::mirror_test::required(b)) FAIL() << "required but unavailable: " << *why; \
      GTEST_SKIP() << *why;                                                                     \
    }                                                                                           \
  } while (0)
