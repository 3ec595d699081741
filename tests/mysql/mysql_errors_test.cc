// The translation of MySQL error numbers into relstore errors (style.md habit 6).
#include <gtest/gtest.h>

#include <functional>
#include <typeinfo>

#include "adapters/mysql/errors.h"
#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

struct Case {
  int code;
  Context ctx;
  std::function<bool(const StorageError&)> is_expected;
  bool retryable;
  const char* says;  // a phrase the message must contain
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

TEST(MysqlErrors, TranslationTable) {
  const Case cases[] = {
      {1205, Context::vote, is<LockConflictError>(), true, "locked by another transaction"},
      {1205, Context::commit, is<UnableToAcquireCommitLockError>(), true, "commit lock"},
      {3572, Context::vote, is<LockConflictError>(), true, "locked"},
      {3572, Context::commit, is<UnableToAcquireCommitLockError>(), true, "commit lock"},
      {1213, Context::vote, is<LockConflictError>(), true, "deadlock"},
      {1213, Context::commit, is<LockConflictError>(), true, "deadlock"},
      {2006, Context::read, is<DisconnectedError>(), true, "lost the connection"},
      {2013, Context::commit, is<CommitOutcomeUnknownError>(), false,
       "may or may not have been applied"},
      {2006, Context::vote, is<DisconnectedError>(), true, "the next transaction reconnects"},
      {2055, Context::vote, is<DisconnectedError>(), true, "lost the connection"},
      {1927, Context::read, is<DisconnectedError>(), true, "lost the connection"},
      {2003, Context::connect, is<DisconnectedError>(), true, "cannot reach"},
      {2002, Context::connect, is<DisconnectedError>(), true, "cannot reach"},
      {1045, Context::connect, is<StorageError>(), false, "wrong user name or password"},
      {1040, Context::connect, is<DisconnectedError>(), true, "refuses more connections"},
      {1203, Context::connect, is<DisconnectedError>(), true, "refuses more connections"},
      {1226, Context::other, is<StorageError>(), false, "resource limit of its account"},
      {1044, Context::other, is<StorageError>(), false, "lacks a privilege"},
      {1370, Context::commit, is<StorageError>(), false, "lacks a privilege"},
      {1049, Context::connect, is<SchemaError>(), false, "does not exist"},
      {1146, Context::read, is<SchemaError>(), false, "lacks a table"},
      {1305, Context::vote, is<SchemaError>(), false, "procedure is missing"},
      {1290, Context::vote, is<ReadOnlyError>(), false, "read-only"},
      {1153, Context::vote, is<StorageError>(), false, "max_allowed_packet"},
      {1064, Context::other, is<StorageError>(), false, "(MySQL error 1064)"},
  };
  for (const auto& c : cases) {
    try {
      throw_error(c.code, "server message", c.ctx, "what");
      ADD_FAILURE() << c.code << ": nothing thrown";
    } catch (const StorageError& e) {
      const std::string msg = e.what();
      EXPECT_TRUE(c.is_expected(e)) << c.code << ": " << msg;
      EXPECT_EQ(e.retryable(), c.retryable) << c.code << ": " << msg;
      EXPECT_NE(msg.find(c.says), std::string::npos) << c.code << ": " << msg;
      EXPECT_NE(msg.find("what"), std::string::npos) << c.code;
      EXPECT_NE(msg.find("server message"), std::string::npos) << c.code;
    }
  }
}

TEST(MysqlErrors, LostConnectionsMarkTheConnectionBroken) {
  for (int code : {2006, 2013, 2055, 1927, 1053, 4031, 2002, 2003})
    EXPECT_TRUE(is_disconnect(code));
  for (int code : {1205, 1213, 1045, 1146}) EXPECT_FALSE(is_disconnect(code));
}

}  // namespace
}  // namespace relstore::mysql
