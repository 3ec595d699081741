// ?immutable=1: reading a copy of a SQLite database where SQLite may not create its -shm
// file (a backup on read-only media), and refusing to when a -wal holds unseen commits.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "adapters/sqlite/errors.h"
#include "relstore/errors.h"
#include "relstore/storage.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

Tid commit_one(StorageInstance& inst, uint64_t oid, const std::string& data) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  inst.store(Oid(oid), std::nullopt, data, txn);
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

TEST(SqliteImmutable, ReadsAClosedDatabaseReadOnlyAndLeavesNoFiles) {
  TempDir d;
  // '?', '#' and '%' in the path must reach SQLite escaped in its URI filename.
  const std::string dir = d.sub("db?#%");
  const std::string uri = "sqlite://" + d.sub("db%3F%23%25");
  Tid t;
  {
    auto st = open_storage(uri);
    t = commit_one(*st->new_instance(), 1, "first");
    st->close();
  }
  ASSERT_FALSE(std::filesystem::exists(dir + "/main.sqlite3-wal"));
  auto st = open_storage(uri + "?immutable=1");
  EXPECT_TRUE(st->is_read_only());  // implied
  auto inst = st->new_instance();
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "first");
  EXPECT_EQ(inst->load(Oid(1)).tid, t);
  TransactionMetaData txn{"", "", ""};
  EXPECT_THROW(inst->tpc_begin(txn), ReadOnlyError);
  inst.reset();
  st->close();
  EXPECT_FALSE(std::filesystem::exists(dir + "/main.sqlite3-shm"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/main.sqlite3-wal"));
}

// While a -wal holds commits, immutable=1 would read main.sqlite3 without them.
TEST(SqliteImmutable, RefusedWhileTheWalHoldsCommits) {
  TempDir d;
  const std::string dir = d.sub("db");
  auto writer = open_storage("sqlite://" + dir);
  commit_one(*writer->new_instance(), 1, "in the wal");
  ASSERT_GT(std::filesystem::file_size(dir + "/main.sqlite3-wal"), 0u);
  try {
    open_storage("sqlite://" + dir + "?immutable=1");
    FAIL() << "opened";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("main.sqlite3-wal is not empty"), std::string::npos)
        << e.what();
  }
}

TEST(SqliteImmutable, NotAFlagIsAConfigError) {
  TempDir d;
  EXPECT_THROW(open_storage("sqlite://" + d.sub("db") + "?immutable=maybe"), ConfigError);
}

// What a reader gets where it may not create the -shm file (tests run as root, who may
// always create it, so the translation is checked by its result code).
TEST(SqliteImmutable, AnUncreatableShmFileSaysWhatToDo) {
  for (int rc : {SQLITE_READONLY_DIRECTORY, SQLITE_READONLY_CANTINIT}) {
    try {
      sqlite::throw_error(rc, "attempt to write a readonly database", sqlite::Context::read,
                          "reading");
      ADD_FAILURE() << rc << ": nothing thrown";
    } catch (const ReadOnlyError& e) {
      ADD_FAILURE() << rc << ": a ReadOnlyError, which reads as a write refused: " << e.what();
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("?immutable=1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace relstore
