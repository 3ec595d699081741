// Creating, detecting and refusing SQLite databases (issue #2, part 3).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "relstore/errors.h"
#include "relstore/storage.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string uri_of(const TempDir& d, const std::string& sub, const std::string& query = "") {
  return "sqlite://" + d.sub(sub) + query;
}

std::vector<std::string> tables_in(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::vector<std::string> out;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", -1, &s,
                     nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

TEST(SqliteSchema, NewDatabaseIsHistoryPreservingByDefault) {
  TempDir d;
  auto st = open_storage(uri_of(d, "db"));
  EXPECT_TRUE(st->keep_history());
  EXPECT_TRUE(fs::exists(d.sub("db/main.sqlite3")));
  EXPECT_TRUE(fs::exists(d.sub("db/oids.sqlite3")));
  const auto t = tables_in(d.sub("db/main.sqlite3"));
  for (const char* name : {"commit_row_lock", "transaction", "object_state", "current_object",
                           "blob_chunk", "object_ref", "object_refs_added", "pack_object",
                           "pack_state", "pack_state_tid", "relstore_schema"}) {
    EXPECT_NE(std::find(t.begin(), t.end(), name), t.end()) << name;
  }
}

TEST(SqliteSchema, HistoryFreeOnRequestAndDetectedLater) {
  TempDir d;
  open_storage(uri_of(d, "db", "?history=free"))->close();
  const auto t = tables_in(d.sub("db/main.sqlite3"));
  EXPECT_EQ(std::find(t.begin(), t.end(), "transaction"), t.end());
  EXPECT_EQ(std::find(t.begin(), t.end(), "current_object"), t.end());
  EXPECT_FALSE(open_storage(uri_of(d, "db"))->keep_history());
}

TEST(SqliteSchema, OtherModeIsAClearError) {
  TempDir d;
  open_storage(uri_of(d, "hf", "?history=free"));
  open_storage(uri_of(d, "hp", "?history=preserving"));
  try {
    open_storage(uri_of(d, "hf", "?history=preserving"));
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("history-free"), std::string::npos) << e.what();
  }
  EXPECT_THROW(open_storage(uri_of(d, "hp", "?history=free")), SchemaError);
}

TEST(SqliteSchema, MissingDatabaseWithoutCreateCreatesNothing) {
  TempDir d;
  EXPECT_THROW(open_storage(uri_of(d, "nothing", "?create=false&read_only=true")), SchemaError);
  EXPECT_FALSE(fs::exists(d.sub("nothing")));
}

TEST(SqliteSchema, NotASqliteFileIsRefusedUnchanged) {
  TempDir d;
  fs::create_directories(d.sub("junk"));
  {
    std::ofstream f(d.sub("junk/main.sqlite3"));
    f << "this is not a database, just text long enough to have a header of sorts......";
  }
  const auto before = fs::file_size(d.sub("junk/main.sqlite3"));
  EXPECT_THROW(open_storage(uri_of(d, "junk")), SchemaError);
  EXPECT_EQ(fs::file_size(d.sub("junk/main.sqlite3")), before);
  EXPECT_FALSE(fs::exists(d.sub("junk/oids.sqlite3")));
}

TEST(SqliteSchema, AFileInsteadOfADirectoryIsRefused) {
  TempDir d;
  std::ofstream(d.sub("plain")) << "x";
  EXPECT_THROW(open_storage(uri_of(d, "plain")), SchemaError);
}

TEST(SqliteSchema, UnknownOptionIsAConfigError) {
  TempDir d;
  EXPECT_THROW(open_storage(uri_of(d, "db", "?colour=blue")), ConfigError);
}

// A database made with RelStorage's DDL (no relstore_schema, no commit_row_lock row).
TEST(SqliteSchema, RelStorageCreatedDatabaseOpensAsIs) {
  TempDir d;
  fs::create_directories(d.sub("rs"));
  std::ifstream in(std::string(RELSTORE_SOURCE_DIR) + "/tests/fixtures/relstorage_sqlite_hp.sql");
  std::stringstream sql;
  sql << in.rdbuf();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(d.sub("rs/main.sqlite3").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto st = open_storage(uri_of(d, "rs"));
  EXPECT_TRUE(st->keep_history());
  auto inst = st->new_instance();
  const auto r = inst->load(Oid(0));
  EXPECT_EQ(r.data, "hello");
  EXPECT_EQ(r.tid, Tid(0x03dfd11700000000ULL));
  EXPECT_EQ(st->info().schema_version, "1");

  // It accepts commits, and the data it had is untouched.
  TransactionMetaData txn{"bob", "second", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(0), r.tid, "world", txn);
  inst->tpc_vote(txn);
  const Tid tid = inst->tpc_finish(txn);
  EXPECT_GT(tid, r.tid);
  EXPECT_EQ(inst->load_serial(Oid(0), r.tid), "hello");
}

}  // namespace
}  // namespace relstore
