// The PostgreSQL error translation table (adapters/postgresql/errors.cc), and the
// URI-to-libpq parameter mapping; neither needs a server.
#include <gtest/gtest.h>

#include <functional>
#include <typeinfo>

#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/errors.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

template <class E>
bool is(const StorageError& e) {
  const StorageError* p = &e;
  return dynamic_cast<const E*>(p) != nullptr;
}

struct Case {
  const char* sqlstate;
  Context ctx;
  bool connection_lost;
  std::function<bool(const StorageError&)> expected;
  bool retryable;
  const char* says;  // a phrase the message must contain
};

TEST(PostgresqlErrors, TranslationTable) {
  const Case cases[] = {
      {"55P03", Context::vote, false, is<LockConflictError>, true, "holds a lock"},
      {"55P03", Context::commit, false, is<UnableToAcquireCommitLockError>, true, "commit lock"},
      {"55P03", Context::other, false, is<StorageError>, false, "in time"},
      {"40P01", Context::vote, false, is<LockConflictError>, true, "deadlock"},
      {"40P01", Context::commit, false, is<ConflictError>, true, "deadlock"},
      {"40001", Context::vote, false, is<ConflictError>, true, "serialization"},
      {"57P01", Context::read, true, is<DisconnectedError>, true, "reconnects"},
      {"08006", Context::read, true, is<DisconnectedError>, true, "lost"},
      {"", Context::commit, true, is<CommitOutcomeUnknownError>, false,
       "may or may not have been applied"},
      {"57P01", Context::commit, true, is<CommitOutcomeUnknownError>, false, "while committing"},
      {"53300", Context::connect, true, is<DisconnectedError>, true, "connection slots"},
      {"28P01", Context::connect, true, is<StorageError>, false, "authentication failed"},
      {"3D000", Context::connect, true, is<SchemaError>, false, "does not exist"},
      {"42501", Context::schema, false, is<SchemaError>, false, "permission denied"},
      {"42501", Context::read, false, is<SchemaError>, false, "permission denied"},
      {"42P01", Context::read, false, is<SchemaError>, false, "lacks a table"},
      {"42883", Context::vote, false, is<SchemaError>, false, "functions are missing"},
      {"3F000", Context::schema, false, is<SchemaError>, false, "search_path"},
      {"25006", Context::commit, false, is<ReadOnlyError>, false, "refused a write"},
      {"53200", Context::vote, false, is<StorageError>, false, "max_locks_per_transaction"},
      {"23505", Context::commit, false, is<StorageError>, false, "constraint"},
      {"XX000", Context::other, false, is<StorageError>, false, "PostgreSQL error"},
  };
  for (const auto& c : cases) {
    const std::string name =
        std::string(c.sqlstate) + " in context " + std::to_string(static_cast<int>(c.ctx));
    ServerError e{c.sqlstate, "the server's message", "", "", c.connection_lost};
    try {
      throw_error(e, c.ctx, "doing something on postgresql://u:***@h/db");
      ADD_FAILURE() << name << ": nothing thrown";
    } catch (const StorageError& err) {
      const std::string what = err.what();
      EXPECT_TRUE(c.expected(err)) << name << ": " << what;
      EXPECT_EQ(err.retryable(), c.retryable) << name << ": " << what;
      EXPECT_NE(what.find(c.says), std::string::npos) << name << ": " << what;
      EXPECT_NE(what.find("the server's message"), std::string::npos) << name;
      EXPECT_NE(what.find("doing something"), std::string::npos) << name;
    }
  }
}

// 42501's hint follows what the server says was denied: CREATE on the schema, a table's
// rights (a read of relstore_schema by a role granted RelStorage's tables only), or the
// ownership an ALTER needs.
TEST(PostgresqlErrors, PermissionHintsFollowWhatWasDenied) {
  const std::pair<const char*, const char*> cases[] = {
      {"permission denied for schema public", "needs CREATE on the schema"},
      {"permission denied for table relstore_schema", "lacks rights on a table"},
      {"must be owner of table transaction", "the role that owns the tables"},
  };
  for (const auto& [message, says] : cases) {
    ServerError e{"42501", message, "", "", false};
    try {
      throw_error(e, Context::schema, "inspecting postgresql://u:***@h/db");
      ADD_FAILURE() << message << ": nothing thrown";
    } catch (const SchemaError& err) {
      EXPECT_NE(std::string(err.what()).find(says), std::string::npos) << err.what();
      EXPECT_NE(std::string(err.what()).find(message), std::string::npos) << err.what();
    }
  }
}

// libpq reports a failed connection as text only; the usual failures still land in the
// right place of the table.
TEST(PostgresqlErrors, ConnectFailuresByWording) {
  struct ConnectCase {
    const char* message;
    std::function<bool(const StorageError&)> expected;
    const char* says;
  };
  const ConnectCase cases[] = {
      {"connection to server at \"127.0.0.1\", port 1 failed: Connection refused",
       is<DisconnectedError>, "cannot connect"},
      {"FATAL:  password authentication failed for user \"relstore\"", is<StorageError>,
       "authentication failed"},
      {"FATAL:  database \"nope\" does not exist", is<SchemaError>, "does not exist"},
      {"could not translate host name \"nowhere.invalid\" to address", is<DisconnectedError>,
       "cannot connect"},
  };
  for (const auto& c : cases) {
    try {
      throw_error(ServerError{"", c.message, "", "", true}, Context::connect, "connecting");
      ADD_FAILURE() << c.message;
    } catch (const StorageError& err) {
      EXPECT_TRUE(c.expected(err)) << err.what();
      EXPECT_NE(std::string(err.what()).find(c.says), std::string::npos) << err.what();
    }
  }
  try {
    throw_error(ServerError{"", "FATAL:  password authentication failed", "", "", true},
                Context::connect, "connecting");
  } catch (const StorageError& err) {
    EXPECT_FALSE(err.retryable()) << "a wrong password does not get better by retrying";
  }
}

TEST(PostgresqlErrors, MessagesNeverShowAPassword) {
  try {
    throw_error(ServerError{"XX000", "cannot use postgresql://bob:hunter2@host/db", "", "", false},
                Context::other, "opening");
    FAIL();
  } catch (const StorageError& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

TEST(PostgresqlLocation, UriPartsAndDriverOptionsBecomeLibpqParameters) {
  const auto uri = StorageUri::parse(
      "postgresql://bob:s%40cret@db.example:5433/zodb?sslmode=require&history=free");
  const Location loc = location_of(uri, uri.options());
  auto value = [&](const std::string& key) -> std::string {
    for (const auto& [k, v] : loc.connect.params) {
      if (k == key) return v;
    }
    return "<absent>";
  };
  EXPECT_EQ(value("host"), "db.example");
  EXPECT_EQ(value("port"), "5433");
  EXPECT_EQ(value("dbname"), "zodb");
  EXPECT_EQ(value("user"), "bob");
  EXPECT_EQ(value("password"), "s@cret");
  EXPECT_EQ(value("sslmode"), "require");
  EXPECT_EQ(value("connect_timeout"), "10");
  EXPECT_EQ(value("history"), "<absent>");  // relstore's own option stays with relstore
  EXPECT_EQ(loc.connect.describe.find("s%40cret"), std::string::npos);
  EXPECT_EQ(loc.connect.describe.find("s@cret"), std::string::npos);
}

TEST(PostgresqlLocation, UnknownOptionIsAConfigErrorThatDoesNotQuoteTheValue) {
  const auto uri = StorageUri::parse("postgresql://u@h/db?pasword=hunter2");
  try {
    location_of(uri, uri.options());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pasword"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos);
  }
}

}  // namespace
}  // namespace relstore::postgresql
