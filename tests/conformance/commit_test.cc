// Commit basics: conformance.md lines 1–15.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>

#include "conformance/fixture.h"
#include "relstore/clock.h"
#include "relstore/timestamp.h"

namespace relstore::conformance {
namespace {

using namespace std::string_literals;

using CommitBasics = StorageTest;
const Tid kMax(std::numeric_limits<uint64_t>::max());

// Creates object `written` with `data` in a transaction that read `read` with readCurrent
// at `serial`; returns the TID.
Tid commit_reading_current(StorageInstance& inst, Oid read, Tid serial, Oid written,
                           const std::string& data) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  inst.check_current_serial(read, serial, txn);
  inst.store(written, std::nullopt, data, txn);
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

// Line 1.
TEST_P(CommitBasics, StoreVoteFinishReturnsTidAndLoadsExactBytes) {
  const std::string data =
      "\x80\x03}q\x00\x00"
      "binary\xff"s;
  const Tid tid = create(1, data);
  EXPECT_EQ(tid.bytes().size(), 8u);
  EXPECT_FALSE(tid.is_zero());
  const auto r = inst_->load(Oid(1));
  EXPECT_EQ(r.data, data);
  EXPECT_EQ(r.tid, tid);
  const auto before = inst_->load_before(Oid(1), kMax);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->data, data);
  EXPECT_EQ(before->start, tid);
  EXPECT_FALSE(before->end);
  EXPECT_EQ(inst_->load_serial(Oid(1), tid), data);
}

TEST_P(CommitBasics, ManyObjectsAndALargeRecordInOneTransaction) {
  std::map<uint64_t, std::string> data;
  for (uint64_t i = 1; i <= 50; ++i) data[i] = "object " + std::to_string(i);
  data[51] = std::string(3 << 20, 'z');
  const Tid tid = commit(*inst_, data);
  auto fresh = reopen()->new_instance();
  for (const auto& [oid, bytes] : data) {
    const auto r = fresh->load(Oid(oid));
    EXPECT_EQ(r.data, bytes);
    EXPECT_EQ(r.tid, tid);
  }
}

// Line 2.
TEST_P(CommitBasics, TidsStrictlyIncrease) {
  Tid last = create(1, "a");
  for (int i = 0; i < 20; ++i) {
    const Tid next = commit(*inst_, {{1, std::to_string(i)}}, {{1, last}});
    EXPECT_GT(next, last);
    last = next;
  }
  EXPECT_EQ(inst_->last_transaction(), last);
}

TEST_P(CommitBasics, TidsIncreaseWhenTheLastTidIsAheadOfTheClock) {
  // A database moved from a machine whose clock ran ahead: its last TID is in the future.
  const Tid future = TimeStamp(2999, 1, 1, 0, 0, 0).tid();
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn, future);
  inst_->restore(Oid(1), future, std::string("future"), txn);
  inst_->tpc_vote(txn);
  EXPECT_EQ(inst_->tpc_finish(txn), future);
  const Tid next = commit(*inst_, {{2, "now"}});
  EXPECT_GT(next, future);
  EXPECT_GT(commit(*inst_, {{3, "later"}}), next);
}

// The same when the last transaction ahead of the clock deleted the object that carried
// the newest TID: history-free, no object row keeps that TID, and the next one must still
// come after it.
TEST_P(CommitBasics, TidsIncreaseWhenTheLastTidAheadOfTheClockIsADeletion) {
  create(1, "stays");
  const Tid future = TimeStamp(2999, 1, 1, 0, 0, 0).tid();
  const Tid later = TimeStamp(2999, 1, 2, 0, 0, 0).tid();
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn, future);
  inst_->restore(Oid(2), future, std::string("future"), txn);
  inst_->tpc_vote(txn);
  inst_->tpc_finish(txn);
  inst_->tpc_begin(txn, later);
  inst_->restore(Oid(2), later, std::nullopt, txn);
  inst_->tpc_vote(txn);
  EXPECT_EQ(inst_->tpc_finish(txn), later);
  EXPECT_EQ(inst_->last_transaction(), later);
  EXPECT_GT(commit(*inst_, {{3, "now"}}), later);
}

TEST_P(CommitBasics, TidsIncreaseWhenTheClockIsSetBack) {
  if (!context_->client_clock()) {
    GTEST_SKIP() << "needs a clock the test can set back; the server chooses TIDs here (the "
                    "restore-based test above covers a clock behind the last TID)";
  }
  auto clock = std::make_shared<ManualClock>(1'900'000'000.0);
  auto st = open_with_clock(clock);
  auto inst = st->new_instance();
  const Tid first = commit(*inst, {{1, "a"}});
  clock->set(1'000'000'000.0);  // back by years
  const Tid second = commit(*inst, {{2, "b"}});
  EXPECT_EQ(second, Tid(first.value() + 1));
  const Tid third = commit(*inst, {{3, "c"}});
  EXPECT_GT(third, second);
}

// Line 35 with the clock behind: history-free databases keep no transaction rows, so the
// TID of an empty commit can be handed out again, to another committer's real one. That
// commit's changes must still reach the instance whose empty commit had the same TID.
TEST_P(CommitBasics, ACommitAtTheTidOfAnEmptyOwnCommitIsStillReported) {
  if (!context_->client_clock()) {
    GTEST_SKIP() << "needs a clock the test can set back; the server chooses TIDs here";
  }
  auto clock = std::make_shared<ManualClock>(1'900'000'000.0);
  auto st = open_with_clock(clock);
  auto mine = st->new_instance();
  auto other = st->new_instance();
  const Tid first = commit(*mine, {{1, "a"}});
  clock->set(1'000'000'000.0);  // back by years
  mine->poll_invalidations();
  other->poll_invalidations();
  EXPECT_EQ(mine->load(Oid(1)).data, "a");
  commit(*mine, {});  // empty
  commit(*other, {{1, "b"}}, {{1, first}});
  const auto changed = mine->poll_invalidations();
  if (changed) {
    EXPECT_NE(std::find(changed->begin(), changed->end(), Oid(1)), changed->end());
  }
  EXPECT_EQ(mine->load(Oid(1)).data, "b");
}

TEST_P(CommitBasics, LastTransactionIsZeroWhenEmpty) {
  EXPECT_EQ(inst_->last_transaction(), Tid(0));
  EXPECT_EQ(inst_->last_transaction().bytes(), std::string(8, '\0'));
}

TEST_P(CommitBasics, LastTransactionIsTheNewestFinishedTid) {
  create(1, "a");
  const Tid b = create(2, "b");
  EXPECT_EQ(inst_->last_transaction(), b);
  auto other = storage_->new_instance();
  EXPECT_EQ(other->last_transaction(), b);
}

// Line 3.
TEST_P(CommitBasics, StaleSerialRaisesConflictErrorWithSerials) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  try {
    commit(*inst_, {{1, "v3"}}, {{1, t1}});
    FAIL() << "no ConflictError";
  } catch (const ConflictError& e) {
    ASSERT_TRUE(e.oid());
    EXPECT_EQ(*e.oid(), Oid(1));
    ASSERT_TRUE(e.serials());
    EXPECT_EQ(e.serials()->first, t2);
    EXPECT_EQ(e.serials()->second, t1);
  }
  EXPECT_EQ(inst_->load(Oid(1)).data, "v2");
}

TEST_P(CommitBasics, ZeroSerialOnAnExistingObjectConflicts) {
  const Tid t1 = create(1, "v1");
  try {
    commit(*inst_, {{1, "v2"}}, {{1, Tid(0)}});
    FAIL() << "no ConflictError";
  } catch (const ConflictError& e) {
    EXPECT_EQ(*e.oid(), Oid(1));
    EXPECT_EQ(e.serials()->first, t1);
    EXPECT_EQ(e.serials()->second, Tid(0));
  }
}

TEST_P(CommitBasics, NoneSerialOnAnExistingObjectConflicts) {
  create(1, "v1");
  EXPECT_THROW(commit(*inst_, {{1, "v2"}}), ConflictError);
  EXPECT_EQ(inst_->load(Oid(1)).data, "v1");
}

// Line 4.
TEST_P(CommitBasics, NewObjectsAcceptNoneAndZeroSerials) {
  commit(*inst_, {{1, "none serial"}});
  commit(*inst_, {{2, "zero serial"}}, {{2, Tid(0)}});
  EXPECT_EQ(inst_->load(Oid(1)).data, "none serial");
  EXPECT_EQ(inst_->load(Oid(2)).data, "zero serial");
}

// Line 5.
TEST_P(CommitBasics, CallsWithAnotherTransactionRaiseStorageTransactionError) {
  const Tid t1 = create(1, "v1");
  TransactionMetaData begun{"", "", ""}, other{"", "", ""};
  inst_->tpc_begin(begun);
  EXPECT_THROW(inst_->store(Oid(1), t1, "x", other), StorageTransactionError);
  EXPECT_THROW(inst_->restore(Oid(1), t1, std::string("x"), other), StorageTransactionError);
  EXPECT_THROW(inst_->check_current_serial(Oid(1), t1, other), StorageTransactionError);
  EXPECT_THROW(inst_->delete_object(Oid(1), t1, other), StorageTransactionError);
  EXPECT_THROW(inst_->tpc_vote(other), StorageTransactionError);
  inst_->store(Oid(1), t1, "v2", begun);
  inst_->tpc_vote(begun);
  EXPECT_THROW(inst_->tpc_finish(other), StorageTransactionError);
  inst_->tpc_finish(begun);
  EXPECT_EQ(inst_->load(Oid(1)).data, "v2");
}

TEST_P(CommitBasics, TransactionIsCheckedBeforeAnythingElse) {
  // A stale serial with the wrong transaction is a StorageTransactionError, not a conflict.
  create(1, "v1");
  TransactionMetaData begun{"", "", ""}, other{"", "", ""};
  inst_->tpc_begin(begun);
  EXPECT_THROW(inst_->store(Oid(1), Tid(12345), "x", other), StorageTransactionError);
  // And outside any transaction.
  inst_->tpc_abort(begun);
  EXPECT_THROW(inst_->store(Oid(1), std::nullopt, "x", other), StorageTransactionError);
  EXPECT_THROW(inst_->tpc_vote(other), StorageTransactionError);
}

TEST_P(CommitBasics, SecondTpcBeginRaises) {
  TransactionMetaData a{"", "", ""}, b{"", "", ""};
  inst_->tpc_begin(a);
  EXPECT_THROW(inst_->tpc_begin(b), StorageTransactionError);
  EXPECT_THROW(inst_->tpc_begin(a), StorageTransactionError);
  inst_->tpc_abort(a);
  inst_->tpc_begin(b);
  inst_->tpc_abort(b);
}

// Line 6.
TEST_P(CommitBasics, AbortOfAnUnknownTransactionIsANoop) {
  TransactionMetaData never{"", "", ""};
  inst_->tpc_abort(never);
  TransactionMetaData begun{"", "", ""};
  inst_->tpc_begin(begun);
  inst_->store(Oid(1), std::nullopt, "x", begun);
  inst_->tpc_abort(never);  // not the one begun: nothing happens to it
  inst_->tpc_vote(begun);
  inst_->tpc_finish(begun);
  EXPECT_EQ(inst_->load(Oid(1)).data, "x");
}

TEST_P(CommitBasics, AbortAfterStoreDiscardsEverything) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), std::nullopt, "x", txn);
  inst_->tpc_abort(txn);
  EXPECT_THROW(inst_->load(Oid(1)), POSKeyError);
  EXPECT_EQ(inst_->last_transaction(), Tid(0));
}

TEST_P(CommitBasics, AbortAfterVoteReleasesEveryLock) {
  const Tid t1 = create(1, "v1");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), t1, "aborted", txn);
  inst_->check_current_serial(Oid(1), t1, txn);
  inst_->tpc_vote(txn);
  inst_->tpc_abort(txn);
  // Another storage (as another process) can now commit the same object at once.
  auto other_storage = reopen("commit_lock_timeout=5");
  auto other = other_storage->new_instance();
  const Tid t2 = commit(*other, {{1, "v2"}}, {{1, t1}});
  inst_->poll_invalidations();
  EXPECT_EQ(inst_->load(Oid(1)).data, "v2");
  EXPECT_EQ(inst_->load(Oid(1)).tid, t2);
}

TEST_P(CommitBasics, WritingAfterAnAbortWorks) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), std::nullopt, "x", txn);
  inst_->tpc_vote(txn);
  inst_->tpc_abort(txn);
  create(1, "y");
  EXPECT_EQ(inst_->load(Oid(1)).data, "y");
}

// What an aborted vote uploaded stays out of the next commit on the same connection (a
// backend may stage uploads in tables that ROLLBACK does not empty).
TEST_P(CommitBasics, AnAbortedVoteLeavesNothingForTheNextCommit) {
  const Tid t1 = create(1, "v1");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), t1, "aborted", txn);
  inst_->store(Oid(2), std::nullopt, "aborted too", txn);
  inst_->tpc_vote(txn);
  inst_->tpc_abort(txn);
  create(3, "committed");
  EXPECT_EQ(inst_->load(Oid(1)).data, "v1");
  EXPECT_EQ(inst_->load(Oid(1)).tid, t1);
  EXPECT_THROW(inst_->load(Oid(2)), POSKeyError);
  EXPECT_EQ(inst_->load(Oid(3)).data, "committed");
}

// A readCurrent check that failed is not checked again by the next transaction.
TEST_P(CommitBasics, AFailedReadCurrentDoesNotFailTheNextCommit) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*storage_->new_instance(), {{1, "v2"}}, {{1, t1}});
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->check_current_serial(Oid(1), t1, txn);
  inst_->store(Oid(2), std::nullopt, "depends on 1", txn);
  EXPECT_THROW(inst_->tpc_vote(txn), ReadConflictError);
  inst_->tpc_abort(txn);
  inst_->poll_invalidations();
  const Tid t3 = create(3, "x");
  commit_reading_current(*inst_, Oid(3), t3, Oid(2), "depends on 3");
  EXPECT_EQ(inst_->load(Oid(2)).data, "depends on 3");
  EXPECT_EQ(inst_->load(Oid(1)).tid, t2);
}

// Line 7.
TEST_P(CommitBasics, FinishAfterASuccessfulVoteSucceedsWhileOthersWait) {
  const Tid t1 = create(1, "v1");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), t1, "mine", txn);
  inst_->tpc_vote(txn);
  // A competing writer of the same object, from another storage, waits on our locks.
  std::optional<std::string> outcome;
  std::thread rival([&] {
    auto st = reopen("commit_lock_timeout=20");
    auto inst = st->new_instance();
    try {
      commit(*inst, {{1, "theirs"}}, {{1, t1}});
      outcome = "committed";
    } catch (const ConflictError&) {
      outcome = "conflict";
    } catch (const std::exception& e) {
      outcome = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Tid mine = inst_->tpc_finish(txn);
  rival.join();
  EXPECT_EQ(outcome, "conflict");
  EXPECT_EQ(inst_->load(Oid(1)).tid, mine);
  EXPECT_EQ(inst_->load(Oid(1)).data, "mine");
}

// Line 8.
TEST_P(CommitBasics, FinishCallbackRunsOnceWithTheTid) {
  int calls = 0;
  Tid seen;
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), std::nullopt, "x", txn);
  inst_->tpc_vote(txn);
  const Tid tid = inst_->tpc_finish(txn, [&](Tid t) {
    ++calls;
    seen = t;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, tid);
}

// Line 7: tpc_finish does not fail once the vote succeeded — also when the callback reads
// from the storage (the committer's thread, which holds back other readers until the
// callback returns, must not wait for itself).
TEST_P(CommitBasics, AFinishCallbackMayReadFromTheStorage) {
  const Tid t1 = create(1, "old");
  auto other = storage_->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), t1, "new", txn);
  inst_->tpc_vote(txn);
  std::string read_by_callback;
  Tid last_seen;
  const Tid tid = inst_->tpc_finish(txn, [&](Tid) {
    last_seen = inst_->last_transaction();
    other->poll_invalidations();
    read_by_callback = other->load(Oid(1)).data;
  });
  // Whether the callback itself sees the commit is not specified (FileStorage's does not).
  EXPECT_LE(last_seen, tid);
  EXPECT_TRUE(read_by_callback == "old" || read_by_callback == "new") << read_by_callback;
  other->poll_invalidations();
  EXPECT_EQ(other->load(Oid(1)).data, "new");
}

// A callback that throws does so after the commit is durable: the error reaches the
// caller, and the instance counts the commit as its own (the file backend skipped that and
// kept reading its old snapshot).
TEST_P(CommitBasics, ACallbackThatThrowsLeavesTheCommitRecorded) {
  create(5, "before");  // not the first transaction, whose own commit moves the poll mark
  inst_->poll_invalidations();
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), std::nullopt, "committed", txn);
  inst_->tpc_vote(txn);
  Tid seen;
  EXPECT_THROW(inst_->tpc_finish(txn,
                                 [&](Tid tid) {
                                   seen = tid;
                                   throw std::runtime_error("callback");
                                 }),
               std::runtime_error);
  EXPECT_EQ(inst_->last_transaction(), seen);
  EXPECT_EQ(inst_->load(Oid(1)).data, "committed");
  const auto polled = inst_->poll_invalidations();
  ASSERT_TRUE(polled);
  EXPECT_TRUE(polled->empty()) << "its own commit listed as another's";
  EXPECT_GT(commit(*inst_, {{2, "next"}}), seen);
}

// Callbacks nest: one that commits to another storage whose own callback reads from the
// first (each thread running a callback holds that storage's lock already).
TEST_P(CommitBasics, NestedFinishCallbacksOfTwoStoragesMayReadBoth) {
  if (GetParam().name == "file") {
    GTEST_SKIP() << "a Data.fs has one writer: a second storage on it cannot commit";
  }
  create(1, "a");
  auto second = reopen();
  auto other = second->new_instance();
  std::string seen;
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(2), std::nullopt, "x", txn);
  inst_->tpc_vote(txn);
  inst_->tpc_finish(txn, [&](Tid) {
    TransactionMetaData inner{"", "", ""};
    other->tpc_begin(inner);
    other->store(Oid(3), std::nullopt, "y", inner);
    other->tpc_vote(inner);
    other->tpc_finish(inner, [&](Tid) { seen = inst_->load(Oid(1)).data; });
  });
  EXPECT_EQ(seen, "a");
  other->poll_invalidations();
  EXPECT_EQ(other->load(Oid(2)).data, "x");
}

// Commits object 1 (created here as "old") as "new" with a finish callback that takes
// 50 ms, while another thread, with an instance of its own, runs `sees_new` until it
// returns true. True when that thread saw the commit before the callback was done.
bool seen_before_the_callback(Storage& storage, StorageInstance& writer,
                              const std::function<bool(StorageInstance&)>& sees_new) {
  TransactionMetaData create{"", "", ""};
  writer.tpc_begin(create);
  writer.store(Oid(1), std::nullopt, "old", create);
  writer.tpc_vote(create);
  const Tid t = writer.tpc_finish(create);
  std::atomic<bool> callback_done{false}, violated{false};
  std::atomic<int> rounds{0};
  std::thread reader([&] {
    auto inst = storage.new_instance();
    for (;;) {
      const bool seen = sees_new(*inst);
      ++rounds;
      if (seen) {
        if (!callback_done) violated = true;
        return;
      }
    }
  });
  while (rounds < 3) std::this_thread::yield();
  TransactionMetaData txn{"", "", ""};
  writer.tpc_begin(txn);
  writer.store(Oid(1), t, "new", txn);
  writer.tpc_vote(txn);
  writer.tpc_finish(txn, [&](Tid) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    callback_done = true;
  });
  reader.join();
  return violated;
}

TEST_P(CommitBasics, FinishCallbackRunsBeforeOtherReadersSeeTheCommit) {
  EXPECT_FALSE(seen_before_the_callback(*storage_, *inst_, [](StorageInstance& inst) {
    inst.poll_invalidations();
    return inst.load(Oid(1)).data == "new";
  })) << "a reader saw the commit before its callback ran";
}

// Line 8 for iterators: one opened while the callback runs does not show the commit yet.
TEST_P(CommitBasics, FinishCallbackRunsBeforeAnIteratorSeesTheCommit) {
  EXPECT_FALSE(seen_before_the_callback(*storage_, *inst_, [](StorageInstance& inst) {
    bool seen = false;
    auto it = inst.iterator();
    TransactionRecord txn;
    while (it->next(txn)) {
      for (const auto& r : txn.records) seen = seen || (r.data && *r.data == "new");
    }
    return seen;
  })) << "an iterator saw the commit before its callback ran";
}

// Line 9.
TEST_P(CommitBasics, EmptyTransactionsCommitAndRepeat) {
  Tid last;
  for (int i = 0; i < 3; ++i) {
    TransactionMetaData txn{"u", "empty " + std::to_string(i), ""};
    inst_->tpc_begin(txn);
    EXPECT_TRUE(inst_->tpc_vote(txn).empty());
    const Tid tid = inst_->tpc_finish(txn);
    EXPECT_GT(tid, last);
    last = tid;
  }
  EXPECT_GT(create(1, "after"), last);
}

TEST_P(CommitBasics, EmptyTransactionsAppearInTheIterator) {
  TransactionMetaData txn{"u", "empty", ""};
  inst_->tpc_begin(txn);
  inst_->tpc_vote(txn);
  const Tid tid = inst_->tpc_finish(txn);
  auto it = inst_->iterator();
  TransactionRecord rec;
  if (hp()) {
    ASSERT_TRUE(it->next(rec));
    EXPECT_EQ(rec.tid, tid);
    EXPECT_EQ(rec.description, "empty");
    EXPECT_TRUE(rec.records.empty());
  } else {
    // History-free databases keep no transaction rows: only object rows carry TIDs, so
    // an empty transaction leaves nothing to iterate (RelStorage behaves the same).
    EXPECT_FALSE(it->next(rec));
  }
}

// Line 10.
TEST_P(CommitBasics, NewOidIsUniqueNonZeroAndIncreasing) {
  auto other = storage_->new_instance();
  auto second_storage = reopen();
  auto third = second_storage->new_instance();
  std::set<Oid> seen;
  Oid last_mine;
  for (int i = 0; i < 100; ++i) {
    for (StorageInstance* inst : {inst_.get(), other.get(), third.get()}) {
      const Oid oid = inst->new_oid();
      EXPECT_FALSE(oid.is_zero());
      EXPECT_TRUE(seen.insert(oid).second) << oid.hex() << " handed out twice";
      if (inst == inst_.get()) {
        EXPECT_GT(oid, last_mine);
        last_mine = oid;
      }
    }
  }
}

TEST_P(CommitBasics, StoringALargerOidMovesTheAllocatorPastIt) {
  commit(*inst_, {{5000, "big"}});
  auto fresh = reopen()->new_instance();
  EXPECT_GT(fresh->new_oid(), Oid(5000));
}

TEST_P(CommitBasics, RestoringALargerOidMovesTheAllocatorPastIt) {
  TransactionMetaData txn{"", "", ""};
  const Tid tid = TimeStamp(2020, 1, 1, 0, 0, 0).tid();
  inst_->tpc_begin(txn, tid);
  inst_->restore(Oid(123457), tid, std::string("restored"), txn);
  inst_->tpc_vote(txn);
  inst_->tpc_finish(txn);
  EXPECT_GT(inst_->new_oid(), Oid(123457));
  EXPECT_GT(reopen()->new_instance()->new_oid(), Oid(123457));
}

// Line 10 at the top of the OID range: once the largest OID is stored, no OID is above it,
// so new_oid has none to give; allocators that count in blocks of 16 wrapped to OID 1 and
// handed out OIDs in use.
TEST_P(CommitBasics, AfterTheLargestOidNewOidHasNoneToGive) {
  const Oid largest(~uint64_t{0});
  commit(*inst_, {{5, "low"}, {largest.value(), "the largest"}});
  const auto other = storage_->new_instance();
  for (auto* inst : {inst_.get(), other.get()}) {
    try {
      const Oid oid = inst->new_oid();
      ADD_FAILURE() << "new_oid gave " << oid.value() << ", not above " << largest.value();
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("OID"), std::string::npos) << e.what();
    }
  }
}

// Line 10 within one storage: OIDs it already holds for new_oid are not handed out once a
// store has used one of them (or an OID above them).
TEST_P(CommitBasics, StoringAnOidTheAllocatorHeldBackMovesPastIt) {
  const Oid first = inst_->new_oid();  // the storage may now hold a block of OIDs after it
  const Oid taken(first.value() + 5);
  commit(*inst_, {{taken.value(), "stored under an OID the application chose"}});
  EXPECT_GT(inst_->new_oid(), taken);
  EXPECT_GT(storage_->new_instance()->new_oid(), taken);
}

// Line 11.
TEST_P(CommitBasics, StaleReadCurrentRaisesReadConflictError) {
  const Tid t1 = create(1, "v1");
  auto other = storage_->new_instance();
  const Tid t2 = commit(*other, {{1, "v2"}}, {{1, t1}});
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->check_current_serial(Oid(1), t1, txn);
  inst_->store(Oid(2), std::nullopt, "depends on 1", txn);
  try {
    inst_->tpc_vote(txn);
    FAIL() << "no ReadConflictError";
  } catch (const ReadConflictError& e) {
    EXPECT_EQ(*e.oid(), Oid(1));
    EXPECT_EQ(e.serials()->first, t2);
    EXPECT_EQ(e.serials()->second, t1);
  }
  inst_->tpc_abort(txn);
  inst_->poll_invalidations();
  EXPECT_THROW(inst_->load(Oid(2)), POSKeyError);
}

// The same object read with readCurrent twice: at its current serial the transaction
// commits (MySQL failed on a duplicate key), and when one of the two serials is stale it
// is a ReadConflictError.
TEST_P(CommitBasics, ReadCurrentTwiceOfOneObject) {
  const Tid t1 = create(1, "v1");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->check_current_serial(Oid(1), t1, txn);
  inst_->check_current_serial(Oid(1), t1, txn);
  inst_->store(Oid(2), std::nullopt, "depends on 1", txn);
  inst_->tpc_vote(txn);
  inst_->tpc_finish(txn);
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  TransactionMetaData stale{"", "", ""};
  inst_->tpc_begin(stale);
  inst_->check_current_serial(Oid(1), t2, stale);
  inst_->check_current_serial(Oid(1), t1, stale);
  inst_->store(Oid(3), std::nullopt, "depends on 1", stale);
  EXPECT_THROW(inst_->tpc_vote(stale), ReadConflictError);
  inst_->tpc_abort(stale);
}

// Lines 3 and 11: a restore checks no serials, but it must still wait for a transaction
// that voted a change of its object, or a readCurrent of it, to finish; otherwise it
// slips in between that vote and its finish (PostgreSQL took no lock for a restore).
TEST_P(CommitBasics, ARestoreWaitsForATransactionThatVotedOnItsObject) {
  using namespace std::chrono_literals;
  for (const bool read_current : {false, true}) {
    SCOPED_TRACE(read_current ? "readCurrent" : "store");
    const Tid t1 = create(read_current ? 10 : 20, "v1");
    const Oid oid(read_current ? 10 : 20);
    auto writer = storage_->new_instance();
    TransactionMetaData w{"", "", ""};
    writer->tpc_begin(w);
    if (read_current) {
      writer->check_current_serial(oid, t1, w);
      writer->store(Oid(oid.value() + 1), std::nullopt, "depends on it", w);
    } else {
      writer->store(oid, t1, "written", w);
    }
    writer->tpc_vote(w);
    // Far enough ahead that it still comes after the writer's TID.
    const Tid later = TimeStamp(2999, 1, read_current ? 2 : 1, 0, 0, 0).tid();
    auto restorer = storage_->new_instance();
    auto restored = std::async(std::launch::async, [&] {
      TransactionMetaData txn{"", "", ""};
      restorer->tpc_begin(txn, later);
      try {
        restorer->restore(oid, later, std::string("restored"), txn);
        restorer->tpc_vote(txn);
        return restorer->tpc_finish(txn);
      } catch (...) {
        restorer->tpc_abort(txn);
        throw;
      }
    });
    EXPECT_EQ(restored.wait_for(500ms), std::future_status::timeout)
        << "the restore committed while another transaction had voted on its object";
    const Tid written = writer->tpc_finish(w);
    EXPECT_EQ(restored.get(), later);
    EXPECT_LT(written, later);
    EXPECT_EQ(reopen()->new_instance()->load(oid).data, "restored");
  }
}

TEST_P(CommitBasics, CurrentReadCurrentCommits) {
  const Tid t1 = create(1, "v1");
  commit_reading_current(*inst_, Oid(1), t1, Oid(2), "depends on 1");
  EXPECT_EQ(inst_->load(Oid(2)).data, "depends on 1");
}

TEST_P(CommitBasics, ReadCurrentKeepsOthersFromChangingTheObjectUntilFinish) {
  const Tid t1 = create(1, "v1");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->check_current_serial(Oid(1), t1, txn);
  inst_->store(Oid(2), std::nullopt, "depends on 1", txn);
  inst_->tpc_vote(txn);
  std::atomic<bool> finished{false}, rival_done{false};
  std::optional<Tid> rival_tid;
  std::thread rival([&] {
    auto st = reopen("commit_lock_timeout=20");
    auto inst = st->new_instance();
    try {
      rival_tid = commit(*inst, {{1, "changed"}}, {{1, t1}});
    } catch (const StorageError&) {
    }
    if (!finished) ADD_FAILURE() << "the object changed while a readCurrent held it";
    rival_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(rival_done);
  finished = true;
  const Tid mine = inst_->tpc_finish(txn);
  rival.join();
  if (rival_tid) {
    EXPECT_GT(*rival_tid, mine);
  }
}

// Line 12.
TEST_P(CommitBasics, LoadBeforeGivesTheRevisionStrictlyBeforeAndTheNextOne) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  auto current = inst_->load_before(Oid(1), Tid(t2.value() + 1));
  ASSERT_TRUE(current);
  EXPECT_EQ(current->data, "v2");
  EXPECT_EQ(current->start, t2);
  EXPECT_FALSE(current->end);
  if (hp()) {
    auto old = inst_->load_before(Oid(1), t2);
    ASSERT_TRUE(old);
    EXPECT_EQ(old->data, "v1");
    EXPECT_EQ(old->start, t1);
    EXPECT_EQ(old->end, t2);
  } else {
    // History-free keeps only the current revision: nothing before it is known.
    EXPECT_FALSE(inst_->load_before(Oid(1), t2));
  }
}

TEST_P(CommitBasics, LoadBeforeIsNoneWhenCreatedAtOrAfterTheTid) {
  const Tid t0 = create(2, "other");
  const Tid t1 = create(1, "v1");
  EXPECT_FALSE(inst_->load_before(Oid(1), t1));
  EXPECT_FALSE(inst_->load_before(Oid(1), t0));
}

TEST_P(CommitBasics, LoadBeforeOfAnUnknownOidRaisesPOSKeyError) {
  create(1, "v1");
  EXPECT_THROW(inst_->load_before(Oid(99), kMax), POSKeyError);
  EXPECT_THROW(inst_->load(Oid(99)), POSKeyError);
}

// Line 13.
TEST_P(CommitBasics, ExplicitTidsAreUsedAsIsEvenTinyOnes) {
  for (uint64_t t = 1; t <= 3; ++t) {
    TransactionMetaData txn{"", "", ""};
    inst_->tpc_begin(txn, Tid(t));
    inst_->restore(Oid(t), Tid(t), "r" + std::to_string(t), txn);
    inst_->tpc_vote(txn);
    EXPECT_EQ(inst_->tpc_finish(txn), Tid(t));
  }
  for (uint64_t t = 1; t <= 3; ++t) EXPECT_EQ(inst_->load(Oid(t)).tid, Tid(t));
  EXPECT_EQ(inst_->last_transaction(), Tid(3));
  EXPECT_GT(create(9, "normal"), Tid(3));
}

// Lines 2 and 13: an explicit TID is used as is only when it comes after the last one.
// One at or before it would give a commit that other instances' polls (which ask for
// "newer than what I saw") never report, and a last_transaction() that steps back. Here
// the writer's own snapshot is older than the database: the check must read the database.
TEST_P(CommitBasics, AnExplicitTidNotAfterTheLastOneIsRefusedAndChangesNothing) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  inst_->poll_invalidations();
  EXPECT_EQ(inst_->load(Oid(1)).data, "v2");
  auto other = storage_->new_instance();
  other->poll_invalidations();
  const Tid t3 = commit(*other, {{2, "newest"}});
  for (const Tid forced : {Tid(t2.value() + 1), t3, t1}) {
    SCOPED_TRACE(forced.hex());
    TransactionMetaData txn{"", "", ""};
    EXPECT_THROW(
        {
          inst_->tpc_begin(txn, forced);
          inst_->restore(Oid(1), forced, "restored", txn);
          inst_->tpc_vote(txn);
          inst_->tpc_finish(txn);
        },
        StorageTransactionError);
    inst_->tpc_abort(txn);
  }
  auto fresh = reopen()->new_instance();
  EXPECT_EQ(fresh->load(Oid(1)).data, "v2");
  EXPECT_EQ(fresh->load(Oid(1)).tid, t2);
  EXPECT_EQ(fresh->last_transaction(), t3);
  inst_->poll_invalidations();
  EXPECT_GT(commit(*inst_, {{1, "v3"}}, {{1, t2}}), t3);
}

// Line 14.
TEST_P(CommitBasics, LoadSerialReturnsTheExactRevision) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = commit(*inst_, {{1, "v2"}}, {{1, t1}});
  EXPECT_EQ(inst_->load_serial(Oid(1), t2), "v2");
  auto fresh = reopen()->new_instance();  // no cache
  EXPECT_EQ(fresh->load_serial(Oid(1), t2), "v2");
  if (hp()) {
    EXPECT_EQ(fresh->load_serial(Oid(1), t1), "v1");
  }
}

TEST_P(CommitBasics, LoadSerialOfAnUnknownRevisionRaisesPOSKeyError) {
  const Tid t1 = create(1, "v1");
  auto fresh = reopen()->new_instance();
  EXPECT_THROW(fresh->load_serial(Oid(1), Tid(t1.value() - 1)), POSKeyError);
  EXPECT_THROW(fresh->load_serial(Oid(2), t1), POSKeyError);
}

// Line 15 (with delete_object; undo of a creation comes with the undo issue).
TEST_P(CommitBasics, DeletedObjectRaisesPOSKeyError) {
  const Tid t1 = create(1, "v1");
  remove(1, t1);
  EXPECT_THROW(inst_->load(Oid(1)), POSKeyError);
  EXPECT_THROW(inst_->load_before(Oid(1), kMax), POSKeyError);
  auto fresh = reopen()->new_instance();
  EXPECT_THROW(fresh->load(Oid(1)), POSKeyError);
  EXPECT_THROW(fresh->load_before(Oid(1), kMax), POSKeyError);
}

TEST_P(CommitBasics, DeletedObjectKeepsOlderRevisionsReachable) {
  RELSTORE_HP_ONLY(15, "history-free storage removes the object's only row");
  const Tid t1 = create(1, "v1");
  const Tid deleted = remove(1, t1);
  auto fresh = reopen()->new_instance();
  auto old = fresh->load_before(Oid(1), deleted);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->data, "v1");
  EXPECT_EQ(old->start, t1);
  EXPECT_EQ(old->end, deleted);
  EXPECT_EQ(fresh->load_serial(Oid(1), t1), "v1");
}

RELSTORE_CONFORMANCE_SUITE(CommitBasics);

}  // namespace
}  // namespace relstore::conformance
