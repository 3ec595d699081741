// The commit protocol on PostgreSQL: round trips, RelStorage's lock keys, lock timeouts
// (issue #3, parts 3, 5 and 6).
#include <chrono>
#include <future>
#include <thread>

#include "postgresql/pg_support.h"
#include "relstore/errors.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;
using pgtest::update_all;

uint64_t round_trips(const Storage& st) { return st.stats().round_trips; }

class PostgresqlRoundTrips : public pgtest::ModeTest {};

// RelStorage needs 7–8 round trips for a write transaction; relstore sends BEGIN, the
// records and the lock-and-detect call in one pipeline, and the move with COMMIT in one
// message.
TEST_P(PostgresqlRoundTrips, TwentyObjectWriteTransactionTakesAtMostFour) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("rt_write"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  pgtest::Serials serials = pgtest::new_objects(20);
  update_all(*inst, serials, "first");  // warms up: store connection, OID allocator
  const uint64_t before = round_trips(*st);
  update_all(*inst, serials, std::string(2000, 'x'));
  const uint64_t used = round_trips(*st) - before;
  EXPECT_LE(used, 4u);
  EXPECT_EQ(used, 2u) << "BEGIN+records+lock call, finish+COMMIT";
  RecordProperty("round_trips", static_cast<int>(used));
}

// A vote of more than 64 kB goes by binary COPY, which costs the round trip of the COPY
// handshake; what it stores is the same.
TEST_P(PostgresqlRoundTrips, ALargeVoteGoesByCopyInOneRoundTripMore) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("rt_copy"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  pgtest::Serials serials = pgtest::new_objects(20);
  update_all(*inst, serials, "first");
  const uint64_t before = round_trips(*st);
  const std::string big(5000, '\0');  // 20 x 5000 bytes, NUL bytes included
  const Tid tid = update_all(*inst, serials, big);
  EXPECT_EQ(round_trips(*st) - before, 3u) << "BEGIN+COPY+lock call, COPY data, finish+COMMIT";
  auto reader = open_storage(db.uri(query()));
  for (uint64_t oid = 1; oid <= 20; ++oid) {
    const auto r = reader->new_instance()->load(Oid(oid));
    EXPECT_EQ(r.data, big);
    EXPECT_EQ(r.tid, tid);
  }
}

// RelStorage needs 2–3; here the poll, the new snapshot and the end of the previous one
// travel together.
TEST_P(PostgresqlRoundTrips, ReadOnlyTransactionWhosePollFindsNothingTakesAtMostOne) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("rt_read"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  pgtest::Serials serials{{1, Tid(0)}, {2, Tid(0)}};
  update_all(*inst, serials, "data");
  inst->poll_invalidations();
  inst->load(Oid(1));
  inst->load(Oid(2));
  inst->release_snapshot();
  for (int txn = 0; txn < 3; ++txn) {
    const uint64_t before = round_trips(*st);
    const auto changed = inst->poll_invalidations();
    ASSERT_TRUE(changed);
    EXPECT_TRUE(changed->empty());
    EXPECT_EQ(inst->load(Oid(1)).data, "data");  // cache hits
    EXPECT_EQ(inst->load(Oid(2)).data, "data");
    inst->release_snapshot();
    EXPECT_LE(round_trips(*st) - before, 1u) << "transaction " << txn;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PostgresqlRoundTrips, ::testing::Bool(), pgtest::mode_name);

// temp_store has no statistics (temporary tables are never analyzed): a join with it can
// be planned as a scan of the whole object_state table, every commit. On a database of
// 20,000 objects, votes and finishes must reach the big tables through indexes only.
TEST_P(PostgresqlRoundTrips, CommitsNeverScanTheBigTables) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("plans"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  {
    TransactionMetaData txn{"", "fill", ""};
    inst->tpc_begin(txn);
    for (uint64_t oid = 1; oid <= 20000; ++oid) inst->store(Oid(oid), std::nullopt, "x", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  db.exec("ANALYZE");  // real statistics, as a database in use has
  // ("transaction" holds two rows here, so scanning it for the foreign-key checks is right.)
  const std::string tables = "relname IN ('object_state', 'current_object')";
  auto seq_scans = [&] {
    return db.scalar(
        "SELECT string_agg(relname || '=' || seq_scan, ',' ORDER BY relname) "
        "FROM pg_stat_user_tables WHERE " +
        tables);
  };
  auto writes = [&] {
    return std::stoll(
        db.scalar("SELECT pg_stat_clear_snapshot(); SELECT n_tup_ins + n_tup_upd "
                  "FROM pg_stat_user_tables WHERE relname = 'object_state'"));
  };
  // A backend reports its statistics at the end of a transaction when a second has passed
  // since its last report (else after ten idle seconds): one more commit after a pause
  // brings the store connection's figures in.
  pgtest::Serials last{{20000, Tid(0)}};
  last[20000] = inst->load(Oid(20000)).tid;
  auto flush = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    update_all(*inst, last, "flush");
  };
  flush();
  for (int i = 0; i < 100 && writes() < 20001; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string before = seq_scans();
  const long long writes_before = writes();
  pgtest::Serials serials;
  for (uint64_t oid = 1; oid <= 3; ++oid) serials[oid] = inst->load(Oid(oid)).tid;
  const Tid stale = serials[1];
  for (int i = 0; i < 8; ++i) update_all(*inst, serials, "v" + std::to_string(i));
  // A vote of more than 64 kB goes through temp_store (COPY) instead of arrays.
  pgtest::Serials many = serials;
  for (uint64_t oid = 4; oid <= 100; ++oid) many[oid] = inst->load(Oid(oid)).tid;
  update_all(*inst, many, std::string(1000, 'c'));
  serials = {{1, many[1]}, {2, many[2]}, {3, many[3]}};
  // A conflict and a readCurrent go through the other queries.
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->check_current_serial(Oid(2), serials[2], txn);
  inst->store(Oid(1), stale, "stale", txn);
  EXPECT_THROW(inst->tpc_vote(txn), ConflictError);
  inst->tpc_abort(txn);
  flush();
  for (int i = 0; i < 150 && writes() < writes_before + 124; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(writes(), writes_before + 124) << "the server did not report statistics in time";
  EXPECT_EQ(seq_scans(), before);
}

// Votes of more than 64 kB go through temp_store. Emptied with DELETE, it kept the pages of
// the deleted rows (temporary tables are never vacuumed), and every vote scanned them all:
// a store connection that had imported 7 MB took 200 ms per vote. It must stay small.
TEST_P(PostgresqlRoundTrips, TempStoreStaysSmall) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("temp_store"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  // An import: 100 new objects of 1000 bytes per transaction (over 64 kB: by COPY).
  for (uint64_t base = 1; base <= 10000; base += 100) {
    TransactionMetaData txn{"", "import", ""};
    inst->tpc_begin(txn);
    for (uint64_t oid = base; oid < base + 100; ++oid) {
      inst->store(Oid(oid), std::nullopt, std::string(1000, 'i'), txn);
    }
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  // 10 MB went through it. (Another session's temporary table can be sized, not read.)
  const std::string size = db.scalar(
      "SELECT COALESCE(MAX(pg_total_relation_size(c.oid)), -1) FROM pg_class c "
      "JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.relname = 'temp_store' AND n.nspname LIKE 'pg_temp%'");
  EXPECT_GT(std::stoll(size), 0) << "no temp_store found, or it was never written";
  EXPECT_LT(std::stoll(size), 1 << 20) << "temp_store holds " << size << " bytes";
}

Tid create(StorageInstance& inst, uint64_t oid, const std::string& data) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  inst.store(Oid(oid), std::nullopt, data, txn);
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

// The object locks are RelStorage's: row locks on current_object (history-preserving) or
// object_state (history-free), as its lock_objects_and_detect_conflicts takes them.
const char* locked_table(bool hp) { return hp ? "current_object" : "object_state"; }

// What RelStorage's vote takes for an object it modifies.
std::string relstorage_object_lock(bool hp, uint64_t oid) {
  return std::string("SELECT zoid FROM ") + locked_table(hp) +
         " WHERE zoid = " + std::to_string(oid) + " FOR UPDATE";
}

// While a RelStorage vote holds an object's row lock, a relstore writer of that object
// waits, and times out with a retryable LockConflictError.
TEST(PostgresqlLocks, ObjectLockTimeoutIsARetryableLockConflictError) {
  RELSTORE_NEED_POSTGRESQL();
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    TestDatabase db(hp ? "locks_object_hp" : "locks_object_hf");
    auto st = open_storage(db.uri(std::string(hp ? "history=preserving" : "history=free") +
                                  "&commit_lock_timeout=0.2"));
    auto inst = st->new_instance();
    const Tid t1 = create(*inst, 7, "v1");
    auto holder = db.connect();
    holder->simple("BEGIN; " + relstorage_object_lock(hp, 7), postgresql::Context::other);
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(7), t1, "v2", txn);
    try {
      inst->tpc_vote(txn);
      ADD_FAILURE() << "voted past RelStorage's lock on the object";
    } catch (const LockConflictError& e) {
      EXPECT_TRUE(e.retryable());
    }
    inst->tpc_abort(txn);
    holder->simple("ROLLBACK", postgresql::Context::other);
    EXPECT_GT(create(*inst, 8, "after"), t1);
  }
}

// The lost update this prevents: a RelStorage process that voted a change of an object
// commits it while a relstore vote of the same object, from the same serial, waits; the
// vote must then see the new revision and conflict, not overwrite it.
TEST(PostgresqlLocks, AVoteWaitingForRelStoragesLockConflictsWithItsCommit) {
  RELSTORE_NEED_POSTGRESQL();
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    TestDatabase db(hp ? "locks_lost_update_hp" : "locks_lost_update_hf");
    auto st = open_storage(db.uri(std::string(hp ? "history=preserving" : "history=free") +
                                  "&commit_lock_timeout=20"));
    auto inst = st->new_instance();
    const Tid t1 = create(*inst, 7, "v1");
    const Tid t2(t1.value() + 1);
    auto relstorage = db.connect();
    relstorage->simple("BEGIN; " + relstorage_object_lock(hp, 7), postgresql::Context::other);
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(7), t1, "v2 from relstore", txn);
    auto vote = std::async(std::launch::async, [&] { inst->tpc_vote(txn); });
    const bool waited =
        vote.wait_for(std::chrono::milliseconds(500)) == std::future_status::timeout;
    EXPECT_TRUE(waited) << "the vote did not wait for RelStorage's lock";
    // RelStorage's finish: the commit lock, its TID, the move.
    const std::string t = std::to_string(t2.sql());
    relstorage->simple(
        std::string("SELECT tid FROM commit_row_lock FOR UPDATE; ") +
            (hp ? "INSERT INTO \"transaction\" (tid, username, description) "
                  "VALUES (" +
                      t +
                      ", '', ''); "
                      "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) "
                      "VALUES (7, " +
                      t + ", " + std::to_string(t1.sql()) +
                      ", NULL, 2, 'v2'); "
                      "UPDATE current_object SET tid = " +
                      t + " WHERE zoid = 7; "
                : "UPDATE object_state SET tid = " + t + ", state = 'v2' WHERE zoid = 7; ") +
            "COMMIT",
        postgresql::Context::other);
    try {
      vote.get();
      ADD_FAILURE() << "relstore's vote passed over RelStorage's commit";
      inst->tpc_abort(txn);
      continue;
    } catch (const ConflictError& e) {
      EXPECT_EQ(*e.oid(), Oid(7));
      ASSERT_TRUE(e.serials());
      EXPECT_EQ(e.serials()->first, t2);
    }
    inst->tpc_abort(txn);
  }
}

// Begins `txn`, stores a new object `oid` in it and votes: what waits for the commit lock.
void vote_new_object(StorageInstance& inst, TransactionMetaData& txn, uint64_t oid) {
  inst.tpc_begin(txn);
  inst.store(Oid(oid), std::nullopt, "v1", txn);
  inst.tpc_vote(txn);
}

// The commit lock is RelStorage's: the commit_row_lock row, as its lock_and_choose_tid
// takes it. A RelStorage commit holding it keeps relstore's finish waiting.
// While another session holds the commit lock, a finish of a storage opened with `query`
// fails with a retryable UnableToAcquireCommitLockError, and commits once it is free.
void expect_commit_lock_timeout(TestDatabase& db, const std::string& query) {
  auto st = open_storage(db.uri(query));
  auto inst = st->new_instance();
  create(*inst, 1, "v1");
  auto holder = db.connect();
  holder->simple("BEGIN; SELECT tid FROM commit_row_lock FOR UPDATE", postgresql::Context::other);
  TransactionMetaData txn{"", "", ""};
  vote_new_object(*inst, txn, 2);
  try {
    inst->tpc_finish(txn);
    ADD_FAILURE() << "finished while another session held the commit lock";
  } catch (const UnableToAcquireCommitLockError& e) {
    EXPECT_TRUE(e.retryable());
  }
  inst->tpc_abort(txn);
  holder->simple("ROLLBACK", postgresql::Context::other);
  create(*inst, 2, "v1");
}

TEST(PostgresqlLocks, CommitLockTimeoutIsUnableToAcquireCommitLock) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("locks_commit");
  expect_commit_lock_timeout(db, "commit_lock_timeout=0.2");
}

// A statement_timeout set on the database (or role) shorter than the commit lock timeout
// cut the finish's wait for the commit lock short with a plain, not retryable, error;
// store sessions turn it off and keep to lock_timeout.
TEST(PostgresqlLocks, AStatementTimeoutDoesNotCutTheLockWaitsShort) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("locks_statement_timeout");
  db.exec("ALTER DATABASE \"" + db.name() + "\" SET statement_timeout = '100ms'");
  expect_commit_lock_timeout(db, "commit_lock_timeout=0.6");
}

// Without its row, commit_row_lock would lock nothing and exclude no other committer: the
// commit fails instead, and leaves nothing behind.
TEST(PostgresqlLocks, ACommitLockTableWithoutItsRowFailsTheCommit) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("locks_no_row");
  auto st = open_storage(db.uri());
  auto inst = st->new_instance();
  create(*inst, 1, "v1");
  db.exec("DELETE FROM commit_row_lock");
  TransactionMetaData txn{"", "", ""};
  vote_new_object(*inst, txn, 2);
  try {
    inst->tpc_finish(txn);
    FAIL() << "committed without the commit lock";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("commit_row_lock has no row"), std::string::npos)
        << e.what();
  }
  inst->tpc_abort(txn);
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM object_state WHERE zoid = 2"), "0");
}

// RelStorage holds the session advisory lock -1 through a whole pack or undo
// (PostgreSQLLocker.hold_pack_lock). relstore's commits, zaps and mirror batches go on.
TEST(PostgresqlLocks, RelStoragesPackLockDoesNotStopCommits) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("locks_pack");
  auto st = open_storage(db.uri("commit_lock_timeout=0.5"));
  auto inst = st->new_instance();
  const Tid t1 = create(*inst, 1, "v1");
  auto packer = db.connect();
  EXPECT_EQ(packer->simple("SELECT pg_try_advisory_lock(-1)", postgresql::Context::other)
                .front()
                .bytes(0, 0),
            "t");
  EXPECT_GT(create(*inst, 2, "during the pack"), t1);
  st->zap_all();
  EXPECT_GT(create(*inst, 3, "after the zap"), Tid(0));
  packer->simple("SELECT pg_advisory_unlock(-1)", postgresql::Context::other);
}

// readCurrent takes RelStorage's shared row lock with NOWAIT: it never waits for a writer.
TEST(PostgresqlLocks, ReadCurrentOfAnObjectBeingCommittedFailsAtOnce) {
  RELSTORE_NEED_POSTGRESQL();
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    TestDatabase db(hp ? "locks_read_current_hp" : "locks_read_current_hf");
    auto st = open_storage(db.uri(std::string(hp ? "history=preserving" : "history=free") +
                                  "&commit_lock_timeout=20"));
    auto inst = st->new_instance();
    const Tid t1 = create(*inst, 1, "v1");
    create(*inst, 3, "v1");
    auto holder = db.connect();
    holder->simple("BEGIN; " + relstorage_object_lock(hp, 1), postgresql::Context::other);
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->check_current_serial(Oid(1), t1, txn);
    inst->store(Oid(2), std::nullopt, "depends on 1", txn);
    const auto started = std::chrono::steady_clock::now();
    try {
      inst->tpc_vote(txn);
      ADD_FAILURE() << "no ReadConflictError";
    } catch (const ReadConflictError& e) {
      EXPECT_EQ(*e.oid(), Oid(1));
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
    inst->tpc_abort(txn);
    holder->simple("ROLLBACK", postgresql::Context::other);
  }
}

// While a transaction is between vote and finish, a RelStorage process cannot lock the
// objects it modifies or read as current.
TEST(PostgresqlLocks, VotedTransactionHoldsRelStoragesRowLocks) {
  RELSTORE_NEED_POSTGRESQL();
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    TestDatabase db(hp ? "locks_visible_hp" : "locks_visible_hf");
    auto st = open_storage(db.uri(hp ? "history=preserving" : "history=free"));
    auto inst = st->new_instance();
    const Tid t1 = create(*inst, 42, "v1");
    const Tid t2 = create(*inst, 43, "v1");
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(42), t1, "v2", txn);
    inst->check_current_serial(Oid(43), t2, txn);
    inst->tpc_vote(txn);
    auto probe = db.connect();
    for (const uint64_t oid : {42, 43}) {
      try {
        probe->simple("BEGIN; " + relstorage_object_lock(hp, oid) + " NOWAIT",
                      postgresql::Context::other);
        ADD_FAILURE() << "object " << oid << " is not locked";
      } catch (const StorageError&) {
      }
      probe->simple("ROLLBACK", postgresql::Context::other);
    }
    inst->tpc_finish(txn);
    probe->simple("BEGIN; " + relstorage_object_lock(hp, 42) + " NOWAIT; ROLLBACK",
                  postgresql::Context::other);
  }
}

// Store connections run at READ COMMITTED whatever the server's default: a vote that waited
// for an object lock must see the commit it waited for. At REPEATABLE READ (a database
// default some operators set) the vote read the serials of the snapshot it took before
// waiting, passed, and the finish then failed with a serialization error.
TEST(PostgresqlLocks, AVoteSeesTheCommitItWaitedForWhateverTheDefaultIsolation) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("locks_isolation");
  db.exec("ALTER DATABASE " + db.name() + " SET default_transaction_isolation = 'repeatable read'");
  auto st = open_storage(db.uri("history=free&commit_lock_timeout=20"));
  auto inst = st->new_instance();
  const Tid t1 = create(*inst, 7, "v1");
  // Another committer holds object 7's lock and changes the object.
  auto holder = db.connect();
  holder->simple(
      "BEGIN; SELECT zoid FROM object_state WHERE zoid = 7 FOR UPDATE; "
      "UPDATE object_state SET tid = tid + 1 WHERE zoid = 7",
      postgresql::Context::other);
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(7), t1, "v2 from the old serial", txn);
  auto vote = std::async(std::launch::async, [&] { inst->tpc_vote(txn); });
  // Commit only once the vote waits for the lock (its transaction has begun).
  auto probe = db.connect();
  for (int i = 0; i < 500; ++i) {
    const auto r = probe->simple(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
        "application_name LIKE '%relstore store%' AND wait_event_type = 'Lock'",
        postgresql::Context::other);
    if (r.front().int64(0, 0) > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  holder->simple("COMMIT", postgresql::Context::other);
  try {
    vote.get();
    FAIL() << "the vote missed the commit it waited for";
  } catch (const ConflictError& e) {
    EXPECT_EQ(*e.oid(), Oid(7));
    ASSERT_TRUE(e.serials());
    EXPECT_EQ(e.serials()->first, Tid(t1.value() + 1));
  }
  inst->tpc_abort(txn);
}

// OID allocation takes the allocator lock shared, so a setval moving the sequence forward
// (set_min_oid, under that lock exclusively) cannot land between another process's nextval
// and the value it read, and move the sequence back below OIDs already handed out.
TEST(PostgresqlLocks, OidAllocationWaitsForTheAllocatorFloorLock) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("locks_oid_floor");
  auto st = open_storage(db.uri());
  auto holder = db.connect();
  holder->simple("BEGIN; SELECT pg_advisory_xact_lock(1919249523, 2)", postgresql::Context::other);
  auto allocated = std::async(std::launch::async, [&] { return st->new_instance()->new_oid(); });
  EXPECT_EQ(allocated.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "allocated OIDs while a floor move held the lock";
  holder->simple("COMMIT", postgresql::Context::other);
  EXPECT_GT(allocated.get(), Oid(0));
}

// A restore's TID is checked at vote, and again under the commit lock at finish: a
// commit that finished in between with a later TID makes the restore's finish fail
// (committing it would put a transaction behind one that polls have already seen).
TEST(PostgresqlTids, ARestoreOvertakenBetweenVoteAndFinishIsRefused) {
  RELSTORE_NEED_POSTGRESQL();
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    TestDatabase db(hp ? "tids_overtaken_hp" : "tids_overtaken_hf");
    auto st = open_storage(db.uri(hp ? "history=preserving" : "history=free"));
    auto restorer = st->new_instance();
    const Tid t1 = create(*restorer, 1, "v1");
    const Tid forced(t1.value() + 1);
    TransactionMetaData txn{"", "", ""};
    restorer->tpc_begin(txn, forced);
    restorer->restore(Oid(2), forced, "restored", txn);
    restorer->tpc_vote(txn);
    const Tid meanwhile = create(*st->new_instance(), 3, "meanwhile");
    ASSERT_GT(meanwhile, forced);
    EXPECT_THROW(restorer->tpc_finish(txn), StorageError);
    restorer->tpc_abort(txn);
    auto reader = open_storage(db.uri(hp ? "history=preserving" : "history=free"))->new_instance();
    EXPECT_THROW(reader->load(Oid(2)), POSKeyError);
    EXPECT_EQ(reader->last_transaction(), meanwhile);
    EXPECT_GT(create(*restorer, 4, "after"), meanwhile);
  }
}

// A restore locks only those of its objects that exist (which another transaction can
// hold). When the object locks were advisory locks, one per record of a restore of 40,000
// new objects overflowed the server's lock table ("out of shared memory").
TEST(PostgresqlLocks, ARestoreOfManyNewObjectsFitsTheLockTable) {
  RELSTORE_NEED_POSTGRESQL();
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    TestDatabase db(hp ? "locks_restore_hp" : "locks_restore_hf");
    auto st = open_storage(db.uri(hp ? "history=preserving" : "history=free"));
    auto inst = st->new_instance();
    const Tid tid = TimeStamp(2020, 1, 1, 0, 0, 0).tid();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn, tid);
    for (uint64_t oid = 1; oid <= 40000; ++oid) inst->restore(Oid(oid), tid, "r", txn);
    inst->tpc_vote(txn);
    EXPECT_EQ(inst->tpc_finish(txn), tid);
    EXPECT_EQ(st->new_instance()->load(Oid(40000)).data, "r");
  }
}

// The TID comes from the server's clock.
TEST(PostgresqlTids, CommitTidsFollowTheServerClock) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("tids_clock");
  auto st = open_storage(db.uri());
  auto inst = st->new_instance();
  const Tid tid = create(*inst, 1, "v");
  const double server_now = std::stod(db.scalar("SELECT extract(epoch FROM clock_timestamp())"));
  EXPECT_NEAR(TimeStamp(tid).unix_time(), server_now, 5.0);
}

}  // namespace
}  // namespace relstore
