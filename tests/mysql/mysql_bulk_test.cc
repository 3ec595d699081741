// Bulk loading for `relstore convert` into MySQL (issue #5): a continued load replaces
// updated objects and removes deleted ones, in both modes, and a replaced history-free
// row takes its blob chunks with it as a commit would; a load holds the bulk-load lock
// and a resume waits for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "backend/registry.h"
#include "mysql/support.h"
#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "support/compare.h"
#include "support/stopped_convert.h"
#include "support/temp_dir.h"

namespace relstore::mysql::testing {
namespace {

using MysqlBulk = MysqlServerTest;

// A SQLite database of 500 sample objects in `d`, the source of the loads.
std::string sample_source(const ::relstore::testing::TempDir& d) {
  const std::string src = "sqlite://" + d.sub("src");
  SampleOptions o;
  o.objects = 500;
  write_sample(src, o);
  return src;
}

void convert_into(const std::string& src, const std::string& dst, bool incremental) {
  ConvertOptions o;
  o.source = src;
  o.destination = dst;
  o.incremental = incremental;
  o.batch_records = 200;  // several batches
  convert(o);
}

// A dry run into a database with no schema yet counts what a real run would copy (which
// would create the schema) and creates nothing.
TEST_F(MysqlBulk, ADryRunIntoAnEmptyDatabaseCountsAndCreatesNothing) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_dry", "?history=free");
  ConvertOptions o;
  o.source = src;
  o.destination = dst;
  o.dry_run = true;
  const ConvertReport r = convert(o);
  EXPECT_GT(r.done.records, 0u);
  EXPECT_TRUE(r.current_only);
  auto conn = connect(StorageUri::parse(dst).database);
  std::string tables = "?";
  conn->batch(
      "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()", 1,
      [&](Rows& rows) {
        if (rows.next()) tables = rows.bytes(0);
      },
      Context::read);
  EXPECT_EQ(tables, "0");
}

TEST_F(MysqlBulk, IncrementalHistoryFreeLoadReplacesAndDeletes) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_hf", "?history=free");
  convert_into(src, dst, false);
  auto conn = connect(StorageUri::parse(dst).database);
  // A blob chunk of oid 10's current revision, as RelStorage would have stored it.
  conn->exec(
      "INSERT INTO blob_chunk (zoid, chunk_num, tid, chunk) SELECT zoid, 0, tid, 'x' "
      "FROM object_state WHERE zoid = 10");
  conn->exec("COMMIT");
  ASSERT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk"), 1);
  ::relstore::testing::update_and_delete_some(src);
  convert_into(src, dst, true);
  EXPECT_EQ(::relstore::testing::storage_differences(src, dst), std::vector<std::string>{});
  EXPECT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk"), 0);
  EXPECT_EQ(conn->query_int("SELECT COUNT(*) FROM object_state WHERE zoid BETWEEN 30 AND 34"), 0);
  auto inst = open_storage(dst)->new_instance();
  EXPECT_THROW(inst->load(Oid(30)), POSKeyError);
  EXPECT_EQ(inst->load(Oid(10)).tid, open_storage(src)->new_instance()->load(Oid(10)).tid);
}

// A history-free commit drops the blob chunks of the objects it writes, as RelStorage's
// move does; they stayed behind, unreachable (their TID no longer the object's).
TEST_F(MysqlBulk, AHistoryFreeCommitDropsTheBlobChunksOfTheStatesItReplaces) {
  const std::string dst = fresh_database("commit_blob_chunks", "?history=free");
  auto st = open_storage(dst);
  auto inst = st->new_instance();
  auto commit = [&](std::optional<Tid> serial, const std::string& data) {
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(10), serial, data, txn);
    inst->store(Oid(11), serial, data, txn);
    inst->tpc_vote(txn);
    return inst->tpc_finish(txn);
  };
  const Tid t1 = commit(std::nullopt, "v1");
  auto conn = connect(StorageUri::parse(dst).database);
  conn->exec(
      "INSERT INTO blob_chunk (zoid, chunk_num, tid, chunk) SELECT zoid, 0, tid, 'x' "
      "FROM object_state");
  conn->exec("COMMIT");
  ASSERT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk"), 2);
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(10), t1, "v2", txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  conn->exec("COMMIT");  // a new snapshot
  EXPECT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk WHERE zoid = 10"), 0);
  EXPECT_EQ(conn->query_int("SELECT COUNT(*) FROM blob_chunk WHERE zoid = 11"), 1);
}

TEST_F(MysqlBulk, IncrementalHistoryPreservingLoadAddsRevisions) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_hp", "?history=preserving");
  convert_into(src, dst, false);
  ::relstore::testing::update_and_delete_some(src);
  convert_into(src, dst, true);
  EXPECT_EQ(::relstore::testing::storage_differences(src, dst), std::vector<std::string>{});
  auto inst = open_storage(dst)->new_instance();
  EXPECT_THROW(inst->load(Oid(30)), POSKeyError);
  auto source = open_storage(src)->new_instance();
  EXPECT_EQ(inst->history(Oid(10), 100).size(), source->history(Oid(10), 100).size());
  EXPECT_EQ(inst->history(Oid(10), 1).at(0).tid, source->history(Oid(10), 1).at(0).tid);
}

// The OID allocator moves in the same transaction as each batch: a batch that cannot
// move it (its rows locked by another session here; a lost connection or a killed process
// alike) does not land, so a resume copies it again, and new_oid never hands out an OID
// the load wrote. (It used to move after the COMMIT: a resume then copied nothing and
// new_oid returned oid 1 again.)
TEST_F(MysqlBulk, ABatchLandsOnlyWithTheOidAllocatorPastIt) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  for (const char* mode : {"?history=free", "?history=preserving"}) {
    SCOPED_TRACE(mode);
    const std::string dst =
        fresh_database(std::string("bulk_oids_") + (mode[9] == 'f' ? "hf" : "hp"), mode);
    open_storage(dst)->close();  // created, so that new_oid exists to be locked
    auto holder = connect(StorageUri::parse(dst).database);
    holder->exec("INSERT INTO new_oid (zoid) VALUES (1)");
    holder->exec("COMMIT");
    // Repeatable read: the rows and the gaps after them, where the batch's row would go,
    // stay locked until COMMIT.
    holder->exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    holder->exec("START TRANSACTION");
    holder->exec("SELECT * FROM new_oid FOR UPDATE");
    ConvertOptions o;
    o.source = src;
    o.destination = dst + "&commit_lock_timeout=1";
    o.batch_records = 100000;  // one batch
    EXPECT_THROW(convert(o), StorageError);
    holder->exec("COMMIT");
    o.incremental = true;
    convert(o);
    EXPECT_EQ(::relstore::testing::storage_differences(src, dst), std::vector<std::string>{});
    auto inst = open_storage(dst)->new_instance();
    const Oid fresh = inst->new_oid();
    EXPECT_GT(fresh, Oid(499)) << "new_oid handed out an OID the load wrote";
  }
}

constexpr const char* kLockName = "CONCAT('relstore_bulk.', MD5(DATABASE()))";

// A conversion killed right after sending a batch leaves a server session that still
// commits it. A resume reads where the destination stands only once that session is done:
// here a test session holds the bulk-load lock, as the dying one does, while it commits a
// later transaction; the resume waits for it, then reads that transaction as the
// destination's last (and, as the test's rows are not the source's, refuses to go on).
TEST_F(MysqlBulk, AResumeWaitsForABatchStillBeingCommitted) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_wait", "?history=preserving");
  convert_into(src, dst, false);
  // The source goes on, and the dying session commits its next transaction's rows.
  const Tid later_tid = ::relstore::testing::update_and_delete_some(src);
  const std::string later = std::to_string(later_tid.sql());
  auto dying = connect(StorageUri::parse(dst).database);
  ASSERT_EQ(dying->query_int(std::string("SELECT GET_LOCK(") + kLockName + ", 0)"), 1);
  dying->exec("START TRANSACTION");
  dying->exec(
      "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, extension) "
      "VALUES (" +
      later + ", FALSE, TRUE, '', '', '')");
  auto resumed = std::async(std::launch::async, [&] {
    ConvertOptions o;
    o.source = src;
    o.destination = dst;
    o.incremental = true;
    return convert(o);
  });
  EXPECT_EQ(resumed.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
  dying->exec("COMMIT");
  dying->exec(std::string("DO RELEASE_LOCK(") + kLockName + ")");
  try {
    resumed.get();
    ADD_FAILURE() << "the resume went on after rows that are not the source's";
  } catch (const StorageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("ends with transaction " + later_tid.hex()));
  }
}

// Ctrl-C while a conversion waits for another load into the same database (GET_LOCK waits
// on the server, up to the whole lock timeout) ends the wait: the run reports itself
// interrupted with nothing copied.
TEST_F(MysqlBulk, AStopWhileWaitingForAnotherLoadEndsTheWait) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_stop", "?history=free&commit_lock_timeout=120");
  open_storage(dst)->close();
  auto other = connect(StorageUri::parse(dst).database);
  ASSERT_EQ(other->query_int(std::string("SELECT GET_LOCK(") + kLockName + ", 0)"), 1);
  ::relstore::testing::expect_a_stop_ends_the_wait(src, dst);
  EXPECT_EQ(other->query_int("SELECT COUNT(*) FROM object_state"), 0);
  other->exec(std::string("DO RELEASE_LOCK(") + kLockName + ")");
}

// Whether the bulk-load lock of `conn`'s database is free, once it is `expected` or two seconds
// have passed (a closed connection's session ends a moment later).
bool bulk_lock_free(Connection& conn, bool expected) {
  bool free = false;
  for (int i = 0; i < 100; ++i) {
    free = conn.query_int(std::string("SELECT IS_FREE_LOCK(") + kLockName + ")") == 1;
    if (free == expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return free;
}

// Both kinds of bulk load hold the lock from their first batch until they end, so that a
// resume can wait for them (above).
TEST_F(MysqlBulk, BulkLoadsHoldTheirLockUntilTheyEnd) {
  for (const bool hp : {false, true}) {
    const std::string dst = fresh_database(hp ? "bulk_lock_hp" : "bulk_lock_hf",
                                           hp ? "?history=preserving" : "?history=free");
    const StorageUri uri = StorageUri::parse(dst);
    auto conn = connect(uri.database);
    auto adapter = backend::open_adapter(uri, uri.options());
    EXPECT_TRUE(bulk_lock_free(*conn, true));
    const Tid tid(0x03f0000000000001ULL);
    if (hp) {
      TransactionRecord t;
      t.tid = tid;
      t.records.push_back({Oid(1), tid, std::string("one"), std::nullopt});
      adapter->bulk_restore(std::vector<TransactionRecord>{t});
    } else {
      adapter->bulk_apply_current(std::vector<backend::BulkRecord>{{Oid(1), tid, "one"}});
    }
    EXPECT_FALSE(bulk_lock_free(*conn, false)) << (hp ? "history-preserving" : "history-free");
    adapter->bulk_finish();
    EXPECT_TRUE(bulk_lock_free(*conn, true)) << (hp ? "history-preserving" : "history-free");
  }
}

// Emptying the database (convert --clear) holds the bulk-load lock too: it waits for a load
// still writing, and a resume waits for a zap whose process was killed.
TEST_F(MysqlBulk, ZapWaitsForABulkLoadStillWriting) {
  const std::string dst = fresh_database("bulk_zap", "?history=free");
  auto st = open_storage(dst);
  auto loading = connect(StorageUri::parse(dst).database);
  ASSERT_EQ(loading->query_int(std::string("SELECT GET_LOCK(") + kLockName + ", 0)"), 1);
  auto zapped = std::async(std::launch::async, [&] { st->zap_all(); });
  EXPECT_EQ(zapped.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  loading->exec(std::string("DO RELEASE_LOCK(") + kLockName + ")");
  zapped.get();
  EXPECT_TRUE(bulk_lock_free(*loading, true));
}

// A bulk-load lock that stays taken (another conversion still writing) ends the wait
// after commit_lock_timeout with a message that says so, and nothing is written.
TEST_F(MysqlBulk, ALoadStillWritingIsReportedAfterTheLockTimeout) {
  ::relstore::testing::TempDir d;
  const std::string src = sample_source(d);
  const std::string dst = fresh_database("bulk_busy", "?history=free");
  open_storage(dst)->close();
  auto other = connect(StorageUri::parse(dst).database);
  ASSERT_EQ(other->query_int(std::string("SELECT GET_LOCK(") + kLockName + ", 0)"), 1);
  try {
    ConvertOptions o;
    o.source = src;
    o.destination = dst + "&commit_lock_timeout=1";
    convert(o);
    FAIL() << "converted while another bulk load held the lock";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("another bulk load is writing"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(other->query_int("SELECT COUNT(*) FROM object_state"), 0);
}

}  // namespace
}  // namespace relstore::mysql::testing
