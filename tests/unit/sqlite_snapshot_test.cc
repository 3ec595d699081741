// A poll that fails part-way (a statement killed or timed out on a server; here a table
// the poll reads taken away for a moment) may already have moved the load connection to
// a new snapshot. The instance must not then serve cached states of the old snapshot
// beside database reads from the new one: that shows half of another transaction.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>

#include "relstore/errors.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

Tid commit(StorageInstance& inst, const std::vector<std::pair<uint64_t, std::string>>& data,
           const std::map<uint64_t, Tid>& serials = {}) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  for (const auto& [oid, bytes] : data) {
    const auto s = serials.find(oid);
    inst.store(Oid(oid), s == serials.end() ? std::nullopt : std::optional<Tid>(s->second), bytes,
               txn);
  }
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

void exec(const std::string& db_path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(SqliteSnapshot, AFailedPollLeavesNoMixOfTwoSnapshots) {
  TempDir d;
  auto st = open_storage("sqlite://" + d.sub("db") + "?history=free");
  auto writer = st->new_instance();
  const Tid t = commit(*writer, {{1, "a1"}, {2, "b1"}});
  auto reader = st->new_instance();
  reader->poll_invalidations();
  ASSERT_EQ(reader->load(Oid(1)).data, "a1");                 // cached now
  commit(*writer, {{1, "a2"}, {2, "b2"}}, {{1, t}, {2, t}});  // one transaction
  const std::string main = d.sub("db") + "/main.sqlite3";
  exec(main, "ALTER TABLE relstore_hf_deletion RENAME TO relstore_hf_deletion_away");
  EXPECT_THROW(reader->poll_invalidations(), StorageError);
  exec(main, "ALTER TABLE relstore_hf_deletion_away RENAME TO relstore_hf_deletion");
  // Nor does the failed poll leave its read transaction open: a checkpoint of the whole
  // WAL, which an open reader blocks, goes through.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(main.c_str(), &db), SQLITE_OK);
    std::string busy;
    auto first_column = [](void* out, int, char** values, char**) {
      *static_cast<std::string*>(out) = values[0] ? values[0] : "";
      return 0;
    };
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", first_column, &busy, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    EXPECT_EQ(busy, "0") << "a reader still holds the WAL";
    sqlite3_close(db);
  }
  const std::string a = reader->load(Oid(1)).data;
  const std::string b = reader->load(Oid(2)).data;
  EXPECT_EQ(a.back(), b.back()) << "half of a transaction: " << a << ", " << b;
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "a2");
  EXPECT_EQ(reader->load(Oid(2)).data, "b2");
}

// A connection made before a migration added the deletion record (relstore migrate up while
// the application runs) must still move it when it deletes: processes started after the
// migration trust the record to tell them of deletions, which no poll can list.
TEST(SqliteSnapshot, DeletionsOfAConnectionOlderThanTheDeletionRecordStillMoveIt) {
  TempDir d;
  const std::string uri = "sqlite://" + d.sub("db") + "?history=free";
  const std::string main = d.sub("db") + "/main.sqlite3";
  open_storage(uri)->close();
  exec(main, "ALTER TABLE relstore_hf_deletion RENAME TO relstore_hf_deletion_away");
  auto old_process = open_storage(uri + "&create=false")->new_instance();
  const Tid t = commit(*old_process, {{1, "a"}, {2, "b"}});  // its connections look now
  exec(main, "ALTER TABLE relstore_hf_deletion_away RENAME TO relstore_hf_deletion");
  auto new_process = open_storage(uri + "&create=false")->new_instance();
  new_process->poll_invalidations();
  ASSERT_EQ(new_process->load(Oid(1)).data, "a");  // cached now

  TransactionMetaData txn{"", "", ""};
  old_process->tpc_begin(txn);
  old_process->delete_object(Oid(1), t, txn);
  old_process->tpc_vote(txn);
  old_process->tpc_finish(txn);
  const auto changed = new_process->poll_invalidations();
  EXPECT_TRUE(!changed || std::find(changed->begin(), changed->end(), Oid(1)) != changed->end())
      << "the deletion of oid 1 went unseen";
  EXPECT_THROW(new_process->load(Oid(1)), POSKeyError);
}

// History-free, the last TID is the larger of the rows' newest and the deletion record, and
// polls list rows after it. Another writer that chooses its TID after the rows alone
// (RelStorage) can commit below the record: a poll must then report everything, not miss
// the commit and let instances serve their cached states of it.
TEST(SqliteSnapshot, ACommitBelowTheDeletionRecordIsNotMissedByPolls) {
  TempDir d;
  auto st = open_storage("sqlite://" + d.sub("db") + "?history=free");
  auto writer = st->new_instance();
  const Tid t2 = commit(*writer, {{2, "b1"}});
  // A restore ahead of the clock, then the deletion of that newest row: the record holds
  // a TID above every row.
  const Tid ahead = TimeStamp::from_unix(TimeStamp(t2).unix_time() + 86400).tid();
  TransactionMetaData restore{"", "", ""};
  writer->tpc_begin(restore, ahead);
  writer->restore(Oid(1), ahead, std::string("a1"), restore);
  writer->tpc_vote(restore);
  writer->tpc_finish(restore);
  TransactionMetaData del{"", "", ""};
  writer->tpc_begin(del);
  writer->delete_object(Oid(1), ahead, del);
  writer->tpc_vote(del);
  const Tid deleted = writer->tpc_finish(del);
  auto reader = st->new_instance();
  reader->poll_invalidations();
  ASSERT_EQ(reader->load(Oid(2)).data, "b1");  // cached now
  ASSERT_EQ(reader->last_transaction(), deleted);
  // Another writer's commit with a TID after the rows' newest, below the record.
  const Tid below(t2.value() + 1);
  ASSERT_LT(below, deleted);
  exec(d.sub("db") + "/main.sqlite3",
       ("UPDATE object_state SET tid = " + std::to_string(below.sql()) +
        ", state = CAST('b2' AS BLOB), state_size = 2 WHERE zoid = 2")
           .c_str());
  const auto changed = reader->poll_invalidations();
  EXPECT_FALSE(changed) << "the poll listed only what came after the record";
  EXPECT_EQ(reader->load(Oid(2)).data, "b2");
}

}  // namespace
}  // namespace relstore
