// Creating, detecting and refusing SQLite databases (issue #2, part 3).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/storage.h"
#include "schema/migrations.h"
#include "support/commits.h"
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

// A configured page size (RelStorage's <pragmas> page_size) is set when the file is made:
// in WAL mode SQLite no longer changes it, so setting it at every open did nothing.
TEST(SqliteSchema, AConfiguredPageSizeIsTheNewFilesPageSize) {
  TempDir d;
  open_storage(uri_of(d, "db", "?pragma.page_size=16384"))->close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(d.sub("db/main.sqlite3").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 16384);
  sqlite3_finalize(s);
  sqlite3_close(db);
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

// A database made with RelStorage's DDL (no relstore_schema, no commit_row_lock row), in
// `dir`.
void load_relstorage_fixture(const std::string& dir) {
  fs::create_directories(dir);
  std::ifstream in(std::string(RELSTORE_SOURCE_DIR) + "/tests/fixtures/relstorage_sqlite_hp.sql");
  std::stringstream sql;
  sql << in.rdbuf();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/main.sqlite3").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(SqliteSchema, RelStorageCreatedDatabaseOpensAsIs) {
  TempDir d;
  load_relstorage_fixture(d.sub("rs"));

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

// `migrate up` with create=false upgrades a RelStorage-created database (recording its
// schema as the baseline) rather than running the baseline's DDL again over its tables.
TEST(SqliteSchema, MigrateUpWithCreateFalseUpgradesARelStorageDatabase) {
  TempDir d;
  load_relstorage_fixture(d.sub("rs"));
  const std::string uri = uri_of(d, "rs", "?create=false");
  const auto done = migrate_up(uri, false);
  ASSERT_EQ(done.size(), migrations_for("sqlite").size());
  EXPECT_EQ(done.front(), "0001_baseline (recorded: the schema RelStorage created)");
  EXPECT_TRUE(migration_status(uri).pending.empty());
  EXPECT_EQ(open_storage(uri)->new_instance()->load(Oid(0)).data, "hello");
}

// What RelStorage's SQLite OID allocator does with oids.sqlite3: read the row n, hand out
// block n (OIDs 16n-15 … 16n), store n + 1.
std::pair<uint64_t, uint64_t> relstorage_new_oids(const std::string& oids_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(oids_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT zoid FROM new_oid", -1, &s, nullptr);
  EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
  const int64_t n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  EXPECT_EQ(sqlite3_exec(db, "UPDATE new_oid SET zoid = zoid + 1", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  return {static_cast<uint64_t>(n * 16 - 15), static_cast<uint64_t>(n * 16)};
}

// relstore and RelStorage share oids.sqlite3 (both may write one database): the row is the
// next block to hand out, as RelStorage reads it. relstore read it as the last block handed
// out, so RelStorage handed out relstore's last block again (and block 0, OIDs -15 … 0,
// on a new database).
TEST(SqliteSchema, RelStorageAndRelstoreNeverHandOutTheSameOid) {
  TempDir d;
  auto st = open_storage(uri_of(d, "db"));
  const std::string oids = d.sub("db/oids.sqlite3");
  const auto first = relstorage_new_oids(oids);
  EXPECT_EQ(first.first, 1u) << "RelStorage's first block on a new database";
  std::set<uint64_t> handed;
  for (uint64_t oid = first.first; oid <= first.second; ++oid) handed.insert(oid);
  for (int round = 0; round < 3; ++round) {
    auto inst = st->new_instance();
    for (int i = 0; i < 40; ++i) {
      EXPECT_TRUE(handed.insert(inst->new_oid().value()).second) << "round " << round;
    }
    const auto block = relstorage_new_oids(oids);
    for (uint64_t oid = block.first; oid <= block.second; ++oid) {
      EXPECT_TRUE(handed.insert(oid).second) << "RelStorage's block repeats oid " << oid;
    }
    st->close();
    st = open_storage(uri_of(d, "db"));  // a fresh pool: allocates from the row again
  }
}

// A database relstore created before: the row held the last block it handed out. The
// first writable open moves it on by one, once.
TEST(SqliteSchema, AnOidCounterOfTheOldMeaningMovesOnOnce) {
  TempDir d;
  open_storage(uri_of(d, "db"))->close();
  const std::string oids = d.sub("db/oids.sqlite3");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(oids.c_str(), &db), SQLITE_OK);
  // The state the old allocator left: blocks 1 … 5 handed out, no marker.
  ASSERT_EQ(
      sqlite3_exec(db, "DROP TABLE IF EXISTS relstore_oid_next_block; UPDATE new_oid SET zoid = 5",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  // Also when it is opened with create=false.
  for (int open = 0; open < 2; ++open) open_storage(uri_of(d, "db", "?create=false"))->close();
  EXPECT_EQ(relstorage_new_oids(oids).first, 6u * 16 - 15);
}

// RelStorage's zap or drop_all removes its tables and leaves relstore's: opening then says
// which tables are left and what to do, changing nothing (it failed on them before).
TEST(SqliteSchema, RelstoresTablesWithoutRelStoragesAreNamed) {
  TempDir d;
  open_storage(uri_of(d, "db"))->close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(d.sub("db/main.sqlite3").c_str(), &db), SQLITE_OK);
  std::vector<std::string> drop;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) {
    const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    if (!is_relstore_only_table(name) && !name.starts_with("sqlite_")) drop.push_back(name);
  }
  sqlite3_finalize(s);
  for (const auto& name : drop) {
    ASSERT_EQ(sqlite3_exec(db, ("DROP TABLE \"" + name + "\"").c_str(), nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  try {
    open_storage(uri_of(d, "db"));
    ADD_FAILURE() << "opened";
  } catch (const SchemaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("has relstore's own tables"), std::string::npos) << what;
    EXPECT_NE(what.find("relstore_schema"), std::string::npos) << what;
    EXPECT_NE(what.find("no object_state"), std::string::npos) << what;
  }
}

// A history-preserving deletion's row has md5 '' (RelStorage's deleteObject writes that):
// RelStorage's undo refuses a transaction whose objects' md5 changed since, and a NULL
// md5 compares equal to nothing, so an earlier change of a deleted object was undoable.
TEST(SqliteSchema, ADeletionRowHasAnEmptyMd5AsRelStorageWritesIt) {
  TempDir d;
  const Tid deleted = testing::create_then_delete(
      *open_storage(uri_of(d, "db", "?history=preserving"))->new_instance(), Oid(5));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((d.sub("db") + "/main.sqlite3").c_str(), &db), SQLITE_OK);
  const std::string sql = "SELECT COUNT(*) FROM object_state WHERE zoid = 5 AND tid = " +
                          std::to_string(deleted.sql()) + " AND state IS NULL AND md5 = ''";
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 1);
  sqlite3_finalize(s);
  sqlite3_close(db);
}

}  // namespace
}  // namespace relstore
