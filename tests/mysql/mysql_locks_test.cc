// Row locks: readCurrent share locks never wait, and they are RelStorage's locks.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "mysql/support.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore::mysql::testing {
namespace {

using MysqlLocks = MysqlServerTest;

// A restore's TID is checked at vote, and again under the commit lock at finish: a
// commit that finished in between with a later TID makes the restore's finish fail
// (committing it would put a transaction behind one that polls have already seen).
TEST_F(MysqlLocks, ARestoreOvertakenBetweenVoteAndFinishIsRefused) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri =
        fresh_database("overtaken", hp ? "?history=preserving" : "?history=free");
    auto st = open_storage(uri);
    auto restorer = st->new_instance();
    const Tid t1 = commit_states(*restorer, {{Oid(1), "v1"}});
    const Tid forced(t1.value() + 1);
    TransactionMetaData txn{"", "", ""};
    restorer->tpc_begin(txn, forced);
    restorer->restore(Oid(2), forced, "restored", txn);
    restorer->tpc_vote(txn);
    const Tid meanwhile = commit_states(*st->new_instance(), {{Oid(3), "meanwhile"}});
    ASSERT_GT(meanwhile, forced);
    EXPECT_THROW(restorer->tpc_finish(txn), StorageError);
    restorer->tpc_abort(txn);
    auto reader = open_storage(uri)->new_instance();
    EXPECT_THROW(reader->load(Oid(2)), POSKeyError);
    EXPECT_EQ(reader->last_transaction(), meanwhile);
    EXPECT_GT(commit_states(*restorer, {{Oid(4), "after"}}), meanwhile);
  }
}

TEST_F(MysqlLocks, AReadCurrentOfAnObjectBeingCommittedFailsAtOnce) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri = fresh_database("locks", hp ? "?history=preserving" : "?history=free");
    auto st = open_storage(uri + "&commit_lock_timeout=20");
    auto writer = st->new_instance();
    const Tid t1 = commit_states(*writer, {{Oid(1), "v1"}, {Oid(2), "other"}});

    // The writer holds object 1's row exclusively between vote and finish.
    TransactionMetaData update{"", "", ""};
    writer->tpc_begin(update);
    writer->store(Oid(1), t1, "v2", update);
    writer->tpc_vote(update);

    auto reader = st->new_instance();
    TransactionMetaData depends{"", "", ""};
    reader->tpc_begin(depends);
    reader->check_current_serial(Oid(1), t1, depends);
    reader->store(Oid(2), t1, "depends on 1", depends);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(reader->tpc_vote(depends), ReadConflictError);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(waited, 2.0) << "the share lock waited for the writer";
    reader->tpc_abort(depends);

    writer->tpc_finish(update);
    // Once the writer is done, the same readCurrent fails for the changed serial instead.
    reader->tpc_begin(depends);
    reader->check_current_serial(Oid(1), t1, depends);
    reader->store(Oid(2), t1, "depends on 1", depends);
    try {
      reader->tpc_vote(depends);
      FAIL() << "no ReadConflictError";
    } catch (const ReadConflictError& e) {
      ASSERT_TRUE(e.oid());
      EXPECT_EQ(*e.oid(), Oid(1));
    }
    reader->tpc_abort(depends);
  }
}

// A vote with readCurrent takes its exclusive locks before its share locks, as RelStorage
// 3.5+ does: waiting for an object another committer holds, it holds no share lock that
// committer could need next, so the two cannot deadlock.
TEST_F(MysqlLocks, AReadCurrentVoteHoldsNoShareLockWhileItWaits) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri =
        fresh_database("lock_order", hp ? "?history=preserving" : "?history=free");
    auto st = open_storage(uri + "&commit_lock_timeout=20");
    auto writer = st->new_instance();
    const Tid t1 = commit_states(*writer, {{Oid(1), "read"}, {Oid(2), "written"}});

    // Another committer (RelStorage, say) holds object 2 and will want object 1 next.
    const char* table = hp ? "current_object" : "object_state";
    auto other = connect(db_of(uri));
    other->batch(
        std::string("START TRANSACTION; SELECT zoid FROM ") + table + " WHERE zoid = 2 FOR UPDATE",
        2, Context::other);
    auto reader = st->new_instance();
    TransactionMetaData depends{"", "", ""};
    reader->tpc_begin(depends);
    reader->check_current_serial(Oid(1), t1, depends);
    reader->store(Oid(2), t1, "depends on 1", depends);
    auto voted = std::async(std::launch::async, [&] { return reader->tpc_vote(depends); });
    // Wait until the vote waits for object 2: for a lock on a table of this test's
    // database. (Not any session in LOCK WAIT: INNODB_TRX lists the whole server's, and
    // tests running beside this one wait too. lock_table quotes its names with the
    // session's quote character, '"' under ANSI_QUOTES: '_' matches either.)
    auto watcher = connect(db_of(uri));
    // Not an assertion: under a loaded server this view has missed the wait for its whole
    // 10 s (seen in CI), and after them the vote is waiting whether it shows or not.
    (void)eventually_one(*watcher,
                         "SELECT COUNT(*) > 0 FROM information_schema.INNODB_TRX t "
                         "JOIN information_schema.INNODB_LOCKS l "
                         "ON l.lock_id = t.trx_requested_lock_id "
                         "WHERE t.trx_state = 'LOCK WAIT' AND l.lock_table LIKE '_" +
                             db_of(uri) + "_._%'");
    // Taking object 1 now deadlocked when the vote held its share lock while waiting.
    EXPECT_NO_THROW(
        other->exec(std::string("SELECT zoid FROM ") + table + " WHERE zoid = 1 FOR UPDATE"));
    other->exec("ROLLBACK");
    EXPECT_NO_THROW(voted.get());
    reader->tpc_finish(depends);
  }
}

TEST_F(MysqlLocks, TheCommitLockIsTheRowOfCommitRowLock) {
  // RelStorage's commit lock: while another session holds commit_row_lock's row, finish
  // waits and gives UnableToAcquireCommitLockError after commit_lock_timeout.
  const std::string uri = fresh_database("commit_lock", "?history=free");
  auto st = open_storage(uri + "&commit_lock_timeout=1");
  auto inst = st->new_instance();
  auto holder = connect(StorageUri::parse(uri).database);
  holder->exec("SET autocommit = 0");
  holder->query_int("SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE");
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), std::nullopt, "x", txn);
  inst->tpc_vote(txn);
  EXPECT_THROW(inst->tpc_finish(txn), UnableToAcquireCommitLockError);
  holder->exec("ROLLBACK");
  TransactionMetaData again{"", "", ""};
  inst->tpc_begin(again);
  inst->store(Oid(1), std::nullopt, "x", again);
  inst->tpc_vote(again);
  inst->tpc_finish(again);
  EXPECT_EQ(inst->load(Oid(1)).data, "x");
}

TEST_F(MysqlLocks, AnObjectLockedByAnotherCommitterTimesOutAsARetryableConflict) {
  const std::string uri = fresh_database("object_lock", "?history=preserving");
  auto st = open_storage(uri + "&commit_lock_timeout=1");
  auto inst = st->new_instance();
  const Tid t1 = commit_one(*inst, Oid(1), std::nullopt, "v1");
  auto holder = connect(StorageUri::parse(uri).database);
  holder->exec("SET autocommit = 0");
  holder->query_int("SELECT tid FROM current_object WHERE zoid = 1 FOR UPDATE");
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), t1, "v2", txn);
  try {
    inst->tpc_vote(txn);
    FAIL() << "took a lock another session holds";
  } catch (const LockConflictError& e) {
    EXPECT_TRUE(e.retryable());
  }
  inst->tpc_abort(txn);
  holder->exec("ROLLBACK");
}

// History-preserving: a vote whose first object conflicts and whose second one is committed
// by another transaction while the vote waits for its lock hands the resolver both
// committed states. The second came back without a state (the subquery reading it used a
// view older than that commit), and the conflict failed unresolved.
TEST_F(MysqlLocks, ASecondConflictCommittedWhileTheVoteWaitedCarriesItsState) {
  const std::string uri = fresh_database("locks_state", "?history=preserving");
  auto st = open_storage(uri + "&commit_lock_timeout=20");
  std::map<Oid, Bytes> committed_seen;
  st->set_conflict_resolver([&](const ConflictInput& in) -> std::optional<Bytes> {
    committed_seen[in.oid] = in.committed_state;
    return in.committed_state + "+" + in.new_state;
  });
  auto other = st->new_instance();
  TransactionMetaData create{"", "", ""};
  other->tpc_begin(create);
  other->store(Oid(1), std::nullopt, "one", create);
  other->store(Oid(2), std::nullopt, "two", create);
  other->tpc_vote(create);
  const Tid t1 = other->tpc_finish(create);
  commit_one(*other, Oid(1), t1, "one, changed");

  // A writer holds object 2 between its vote and its finish.
  auto writer = st->new_instance();
  TransactionMetaData update{"", "", ""};
  writer->tpc_begin(update);
  writer->store(Oid(2), t1, "two, changed while the vote waited", update);
  writer->tpc_vote(update);

  auto inst = st->new_instance();
  TransactionMetaData mine{"", "", ""};
  inst->tpc_begin(mine);
  inst->store(Oid(1), t1, "mine", mine);
  inst->store(Oid(2), t1, "mine", mine);
  auto vote = std::async(std::launch::async, [&] { return inst->tpc_vote(mine); });
  auto watcher = connect(StorageUri::parse(uri).database);
  bool waiting = false;
  for (int i = 0; i < 200 && !waiting; ++i) {
    watcher->batch(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT ''C'' AS "
        "kind%'",
        1, [&](Rows& r) { waiting = r.next() && r.int64(0) > 0; }, Context::read);
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(waiting) << "the vote never waited for object 2";
  writer->tpc_finish(update);
  const std::vector<Oid> resolved = vote.get();
  EXPECT_EQ(resolved.size(), 2u);
  EXPECT_EQ(committed_seen[Oid(1)], "one, changed");
  EXPECT_EQ(committed_seen[Oid(2)], "two, changed while the vote waited");
  inst->tpc_finish(mine);
  auto reader = st->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(2)).data, "two, changed while the vote waited+mine");
}

// Two processes creating the root of an empty database at once (ZODB's DB() does): there is
// no row to lock yet, so the second vote waits on the root's named lock and then conflicts,
// instead of both committing and the second overwriting the first. An aborted creation
// lets the next one through.
TEST_F(MysqlLocks, TwoCreationsOfTheRootAtOnceConflict) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri = fresh_database("root", hp ? "?history=preserving" : "?history=free");
    auto a = open_storage(uri)->new_instance();
    auto b = open_storage(uri)->new_instance();
    TransactionMetaData aborted{"", "", ""};
    a->tpc_begin(aborted);
    a->store(Oid(0), std::nullopt, "aborted root", aborted);
    a->tpc_vote(aborted);
    a->tpc_abort(aborted);

    TransactionMetaData ta{"", "", ""}, tb{"", "", ""};
    a->tpc_begin(ta);
    a->store(Oid(0), std::nullopt, "root of a", ta);
    a->tpc_vote(ta);
    b->tpc_begin(tb);
    b->store(Oid(0), std::nullopt, "root of b", tb);
    auto vote = std::async(std::launch::async, [&] { b->tpc_vote(tb); });
    EXPECT_EQ(vote.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
        << "the second creation did not wait for the first";
    const Tid committed = a->tpc_finish(ta);
    try {
      vote.get();
      ADD_FAILURE() << "both creations of the root went through";
    } catch (const ConflictError& e) {
      EXPECT_EQ(*e.oid(), Oid(0));
      ASSERT_TRUE(e.serials());
      EXPECT_EQ(e.serials()->first, committed);
    }
    b->tpc_abort(tb);
    EXPECT_EQ(open_storage(uri)->new_instance()->load(Oid(0)).data, "root of a");
  }
}

}  // namespace
}  // namespace relstore::mysql::testing
