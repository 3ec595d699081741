#include "mysql/support.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "schema/migrations.h"

namespace relstore::mysql::testing {
namespace {

bool mysql_required() {
  const char* env = std::getenv("RELSTORE_TEST_REQUIRE");
  if (!env) return false;
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "mysql" || item == "all") return true;
  }
  return false;
}

}  // namespace

void MysqlServerTest::SetUp() {
  const char* env = std::getenv("RELSTORE_TEST_MYSQL_URI");
  if (!env) {
    if (mysql_required())
      FAIL() << "mysql is required (RELSTORE_TEST_REQUIRE) but "
                "RELSTORE_TEST_MYSQL_URI is not set";
    GTEST_SKIP() << "RELSTORE_TEST_MYSQL_URI is not set";
  }
  base_ = StorageUri::parse(env);
}

std::string MysqlServerTest::uri_for(const std::string& database, const std::string& user,
                                     const std::string& password) const {
  const std::string u = user.empty() ? base_.user : user;
  const std::string p = user.empty() ? base_.password : password;
  return "mysql://" + u + (p.empty() ? "" : ":" + p) + "@" + base_.host +
         (base_.port ? ":" + std::to_string(*base_.port) : "") + "/" + database;
}

std::unique_ptr<Connection> MysqlServerTest::connect(const std::string& database) {
  StorageUri uri = base_;
  if (!database.empty()) uri.database = database;
  Settings s;
  s.connect = connect_params(uri, uri.options());
  return open_connection(s, Role::admin, nullptr);
}

std::string MysqlServerTest::fresh_database(const std::string& suffix, const std::string& query) {
  const std::string db = base_.database + "_" + suffix;
  auto conn = connect();
  conn->exec("DROP DATABASE IF EXISTS \"" + db + "\"");
  conn->exec("CREATE DATABASE \"" + db + "\"");
  return uri_for(db) + query;
}

void MysqlServerTest::load_fixture(Connection& conn, const std::string& name) {
  std::ifstream in(std::string(RELSTORE_SOURCE_DIR) + "/tests/fixtures/" + name);
  ASSERT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  // The migration splitter knows ";"-terminated statements and "--" comments.
  for (const std::string& stmt : migration_statements(text.str(), true)) {
    conn.exec(trim_statements(stmt));
  }
}

Tid commit_one(StorageInstance& inst, Oid oid, std::optional<Tid> serial, const std::string& data) {
  TransactionMetaData txn{"u", "d", ""};
  inst.tpc_begin(txn);
  inst.store(oid, serial, data, txn);
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

Tid commit_states(StorageInstance& inst, const std::map<Oid, Bytes>& states,
                  const std::map<Oid, Tid>& serials) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  for (const auto& [oid, data] : states) {
    const auto it = serials.find(oid);
    inst.store(oid, it == serials.end() ? std::nullopt : std::optional<Tid>(it->second), data, txn);
  }
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

bool eventually_one(Connection& conn, const std::string& sql) {
  for (int i = 0; i < 500; ++i) {
    if (scalar(conn, sql) == "1") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string db_of(const std::string& uri) { return StorageUri::parse(uri).database; }

std::string scalar(Connection& conn, const std::string& sql) {
  std::string out = "NULL";
  conn.batch(
      sql, 1,
      [&](Rows& r) {
        if (r.next() && !r.is_null(0)) out = r.bytes(0);
      },
      Context::read);
  return out;
}

}  // namespace relstore::mysql::testing
