#include <gtest/gtest.h>

#include <functional>
#include <typeinfo>

#include "adapters/sqlite/errors.h"
#include "relstore/errors.h"

namespace relstore::sqlite {
namespace {

// Which relstore error each SQLite result code becomes, by context.
struct Case {
  int rc;
  Context ctx;
  std::function<bool(const StorageError&)> is_expected;
  const char* name;
};

template <class E>
std::function<bool(const StorageError&)> is() {
  return [](const StorageError& e) {
    try {
      (void)dynamic_cast<const E&>(e);
      return true;
    } catch (const std::bad_cast&) {
      return false;
    }
  };
}

TEST(SqliteErrors, TranslationTable) {
  const Case cases[] = {
      {SQLITE_BUSY, Context::vote, is<UnableToAcquireCommitLockError>(), "busy at vote"},
      {SQLITE_BUSY, Context::commit, is<UnableToAcquireCommitLockError>(), "busy at commit"},
      {SQLITE_BUSY_SNAPSHOT, Context::vote, is<UnableToAcquireCommitLockError>(), "busy snapshot"},
      {SQLITE_LOCKED, Context::vote, is<UnableToAcquireCommitLockError>(), "locked at vote"},
      {SQLITE_BUSY, Context::read, is<DisconnectedError>(), "busy while reading"},
      {SQLITE_NOTADB, Context::open, is<SchemaError>(), "not a database"},
      {SQLITE_READONLY, Context::other, is<ReadOnlyError>(), "read-only file"},
      {SQLITE_CONSTRAINT_PRIMARYKEY, Context::commit, is<StorageError>(), "constraint"},
      {SQLITE_CANTOPEN, Context::open, is<StorageError>(), "cannot open"},
      {SQLITE_CORRUPT, Context::read, is<StorageError>(), "corrupt"},
  };
  for (const auto& c : cases) {
    try {
      throw_error(c.rc, "message", c.ctx, "what");
      ADD_FAILURE() << c.name << ": nothing thrown";
    } catch (const StorageError& e) {
      EXPECT_TRUE(c.is_expected(e)) << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("what"), std::string::npos) << c.name;
    }
  }
}

TEST(SqliteErrors, MissingTableSaysSo) {
  try {
    throw_error(SQLITE_ERROR, "no such table: object_state", Context::read, "loading");
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("object_state"), std::string::npos);
  }
}

TEST(SqliteErrors, BusyIsRetryable) {
  try {
    throw_error(SQLITE_BUSY, "database is locked", Context::vote, "vote");
  } catch (const StorageError& e) {
    EXPECT_TRUE(e.retryable());
  }
}

}  // namespace
}  // namespace relstore::sqlite
