// Bulk loading for `relstore convert` into PostgreSQL (issue #5): batches that resume after
// a kill (also while the killed load's server session is still committing its batch), the upsert
// path for objects a load already wrote, deletions, TIDs the database already has, the OID
// allocator, and the in-commit JSON mirror caught up afterwards.

#include <gmock/gmock.h>

#include <chrono>
#include <future>
#include <thread>

#include "backend/registry.h"
#include "postgresql/pg_support.h"
#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/json_mirror.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "support/compare.h"
#include "support/stopped_convert.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;
using testing::TempDir;

std::string sample_file(const TempDir& d, uint64_t objects) {
  const std::string path = d.sub("Data.fs");
  SampleOptions o;
  o.objects = objects;
  o.seed = 5;
  write_sample("file://" + path, o);
  return "file://" + path;
}

ConvertReport convert_into(const std::string& src, const std::string& dst, bool incremental,
                           size_t batch = 20000) {
  ConvertOptions o;
  o.source = src;
  o.destination = dst;
  o.incremental = incremental;
  o.batch_records = batch;
  return convert(o);
}

class PostgresqlBulk : public pgtest::ModeTest {};

// Killed part-way (an operator's ^C, a crash), the database holds whole batches only, and
// `--incremental` finishes the job with the same content as an uninterrupted run.
TEST_P(PostgresqlBulk, AnInterruptedConversionResumesWithTheSameContent) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("bulk_resume"));
  TempDir d;
  const std::string src = sample_file(d, 30000);
  const std::string dst = db.uri(query());
  testing::convert_killed_when(
      src, dst, [&] { return std::stoll(db.scalar("SELECT COUNT(*) FROM object_state")) > 2000; },
      std::chrono::milliseconds(10), std::chrono::milliseconds(10000));
  const std::string partial = db.scalar("SELECT COUNT(*) FROM object_state");
  EXPECT_GT(std::stoll(partial), 0);

  const ConvertReport r = convert_into(src, dst, true, 500);
  EXPECT_TRUE(r.started_after);
  EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});
}

// A conversion killed right after sending a batch leaves a server session that still
// commits it. A resume reads where the destination stands only once that session is done:
// here a test session holds the bulk-load lock, as the dying one does, while it commits a
// later transaction; the resume waits for it, then reads that transaction as the
// destination's last (and, as the test's rows are not the source's, refuses to go on).
TEST_P(PostgresqlBulk, AResumeWaitsForABatchStillBeingCommitted) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("bulk_wait"));
  TempDir d;
  const std::string src = sample_file(d, 300);
  const std::string dst = db.uri(query());
  convert_into(src, dst, false);
  // The source goes on, and the dying session commits its next transaction's rows.
  const Tid later_tid = testing::update_and_delete_some(src + "?write=1");
  const std::string later = std::to_string(later_tid.sql());
  auto dying = db.connect();
  dying->simple(
      "SELECT pg_advisory_lock(1919249523, 4); BEGIN; " +
          (hp() ? "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, "
                  "extension) VALUES (" +
                      later + ", FALSE, TRUE, '', '', '')"
                : "INSERT INTO object_state (zoid, tid, state_size, state) VALUES (100000, " +
                      later + ", 1, 'x')"),
      postgresql::Context::other);
  auto resumed = std::async(std::launch::async, [&] { return convert_into(src, dst, true); });
  EXPECT_EQ(resumed.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
  dying->simple("COMMIT; SELECT pg_advisory_unlock(1919249523, 4)", postgresql::Context::other);
  try {
    resumed.get();
    ADD_FAILURE() << "the resume went on after rows that are not the source's";
  } catch (const StorageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("ends with transaction " + later_tid.hex()));
  }
}

// Ctrl-C while a conversion waits for another load into the same database (which can last
// the whole lock timeout) ends the wait: the run reports itself interrupted with nothing
// copied. The stop used to be seen only once the wait was over.
TEST_P(PostgresqlBulk, AStopWhileWaitingForAnotherLoadEndsTheWait) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("bulk_stop"));
  TempDir d;
  const std::string src = sample_file(d, 100);
  const std::string dst = db.uri(query()) + "&commit_lock_timeout=120";
  open_storage(dst)->close();
  auto other = db.connect();
  other->simple("SELECT pg_advisory_lock(1919249523, 4)", postgresql::Context::other);
  testing::expect_a_stop_ends_the_wait(src, dst);
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_state"), "0");
  other->simple("SELECT pg_advisory_unlock(1919249523, 4)", postgresql::Context::other);
}

// The OID allocator ends above every copied oid, also after a load into an empty database.
TEST_P(PostgresqlBulk, TheAllocatorEndsAboveTheLargestOid) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("bulk_alloc"));
  TempDir d;
  const std::string src = sample_file(d, 700);
  convert_into(src, db.uri(query()), false, 300);
  const std::string largest = db.scalar("SELECT MAX(zoid) FROM object_state");
  auto st = open_storage(db.uri(query()));
  EXPECT_GT(st->new_instance()->new_oid(), Oid(std::stoull(largest)));
}

// Loads that continue a database go through the upsert path: updated objects get their
// new state, deleted ones disappear (history-free) or get an absent revision.
TEST_P(PostgresqlBulk, IncrementalLoadsUpdateAndDeleteObjects) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("bulk_incr"));
  TempDir d;
  const std::string src = "sqlite://" + d.sub("src");
  SampleOptions o;
  o.objects = 500;
  write_sample(src, o);
  const std::string dst = db.uri(query());
  convert_into(src, dst, false);
  testing::update_and_delete_some(src);
  const ConvertReport r = convert_into(src, dst, true);
  EXPECT_EQ(r.done.transactions, 1u);
  EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});
  auto st = open_storage(dst);
  auto inst = st->new_instance();
  EXPECT_THROW(inst->load(Oid(30)), POSKeyError);
  EXPECT_EQ(inst->load(Oid(10)).tid, open_storage(src)->new_instance()->load(Oid(10)).tid);
}

// A destination with its in-commit mirror on is caught up after the load (bulk rows go
// past it).
TEST_P(PostgresqlBulk, AnInCommitMirrorIsCaughtUpAfterTheLoad) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("bulk_mirror"));
  TempDir d;
  const std::string src = sample_file(d, 300);
  const std::string dst = db.uri(query());
  open_storage(dst)->close();
  mirror_enable(dst, MirrorMode::in_commit);
  const ConvertReport r = convert_into(src, dst, false);
  EXPECT_GT(r.mirror_rows, 0u);
  const MirrorStatus s = mirror_status(dst);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.rows + s.undecodable, open_storage(dst)->len());
}

INSTANTIATE_TEST_SUITE_P(Modes, PostgresqlBulk, ::testing::Bool(), pgtest::mode_name);

// Restoring a transaction the database already has is refused with its TID, and the
// batch changes nothing.
TEST(PostgresqlBulkHp, ATidTheDatabaseHasIsRefusedAndTheBatchChangesNothing) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("bulk_duplicate");
  const StorageUri uri = StorageUri::parse(db.uri("history=preserving"));
  auto adapter = backend::open_adapter(uri, uri.options());
  ASSERT_TRUE(adapter->supports_bulk());
  TransactionRecord first;
  first.tid = Tid(0x03f0000000000001ULL);
  first.records.push_back({Oid(1), first.tid, std::string("one"), std::nullopt});
  adapter->bulk_restore(std::vector<TransactionRecord>{first});
  TransactionRecord second = first;
  second.tid = Tid(0x03f0000000000002ULL);
  second.records[0].oid = Oid(2);
  try {
    adapter->bulk_restore(std::vector<TransactionRecord>{second, first});
    FAIL() << "restored a TID twice";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("03f0000000000001"), std::string::npos) << e.what();
  }
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_state"), "1");
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM \"transaction\" WHERE tid > 0"), "1");
}

// How many sessions hold the bulk-load lock on `db`, once the count is `expected` or two
// seconds have passed (a closed connection's session ends a moment later).
std::string bulk_lock_holders(TestDatabase& db, const std::string& expected) {
  std::string n;
  for (int i = 0; i < 100; ++i) {
    n = db.scalar(
        "SELECT COUNT(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
        "WHERE d.datname = current_database() AND l.locktype = 'advisory' "
        "AND l.classid = 1919249523 AND l.objid = 4 AND l.granted");
    if (n == expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return n;
}

// A bulk load holds its lock from its first batch until it ends, so that a resume can wait
// for it (above).
TEST(PostgresqlBulkHp, ABulkLoadHoldsItsLockUntilItEnds) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("bulk_holds_lock");
  const StorageUri uri = StorageUri::parse(db.uri("history=preserving"));
  auto adapter = backend::open_adapter(uri, uri.options());
  EXPECT_EQ(bulk_lock_holders(db, "0"), "0");
  TransactionRecord first;
  first.tid = Tid(0x03f0000000000001ULL);
  first.records.push_back({Oid(1), first.tid, std::string("one"), std::nullopt});
  adapter->bulk_restore(std::vector<TransactionRecord>{first});
  EXPECT_EQ(bulk_lock_holders(db, "1"), "1");
  adapter->bulk_finish();
  EXPECT_EQ(bulk_lock_holders(db, "0"), "0");
}

// Emptying the database (convert --clear) holds the bulk-load lock too: it waits for a load
// still writing, and a resume waits for a zap whose process was killed.
TEST(PostgresqlBulkHp, ZapWaitsForABulkLoadStillWriting) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("bulk_zap");
  auto st = open_storage(db.uri("history=preserving"));
  auto loading = db.connect();
  loading->simple("SELECT pg_advisory_lock(1919249523, 4)", postgresql::Context::other);
  auto zapped = std::async(std::launch::async, [&] { st->zap_all(); });
  EXPECT_EQ(zapped.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  loading->simple("SELECT pg_advisory_unlock(1919249523, 4)", postgresql::Context::other);
  zapped.get();
  EXPECT_EQ(bulk_lock_holders(db, "0"), "0");
}

// A bulk-load lock that stays taken (another conversion still writing) ends the wait
// after commit_lock_timeout with a message that says so, and nothing is written.
TEST(PostgresqlBulkHp, ALoadStillWritingIsReportedAfterTheLockTimeout) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("bulk_busy");
  TempDir d;
  const std::string src = sample_file(d, 50);
  open_storage(db.uri("history=preserving"))->close();
  auto other = db.connect();
  other->simple("SELECT pg_advisory_lock(1919249523, 4)", postgresql::Context::other);
  try {
    convert_into(src, db.uri("history=preserving&commit_lock_timeout=1"), false);
    FAIL() << "converted while another bulk load held the lock";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("another bulk load is writing"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM \"transaction\" WHERE tid > 0"), "0");
}

}  // namespace
}  // namespace relstore
