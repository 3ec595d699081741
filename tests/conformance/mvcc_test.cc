// MVCC: conformance.md lines 34–35.
#include <algorithm>
#include <tuple>

#include "conformance/fixture.h"

namespace relstore::conformance {
namespace {

class Mvcc : public StorageTest {
 protected:
  // A reader whose snapshot holds oid 1 at "v1" (t1), then, committed after it through
  // inst_, oid 1 at "v2" (t2) and a new oid 2.
  struct Moved {
    std::unique_ptr<StorageInstance> reader;
    Tid t1, t2;
  };
  Moved snapshot_then_commits() {
    Moved m;
    m.t1 = create(1, "v1");
    m.reader = storage_->new_instance();
    m.reader->poll_invalidations();
    EXPECT_EQ(m.reader->load(Oid(1)).data, "v1");
    m.t2 = commit(*inst_, {{1, "v2"}}, {{1, m.t1}});
    create(2, "new object");
    return m;
  }
};

std::vector<Oid> sorted(std::vector<Oid> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Line 34.
TEST_P(Mvcc, AnInstanceSeesAStableSnapshotUntilItPolls) {
  auto [reader, t1, t2] = snapshot_then_commits();
  EXPECT_EQ(reader->load(Oid(1)).data, "v1");
  EXPECT_EQ(reader->load(Oid(1)).tid, t1);
  EXPECT_THROW(reader->load(Oid(2)), POSKeyError);
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "v2");
  EXPECT_EQ(reader->load(Oid(1)).tid, t2);
  EXPECT_EQ(reader->load(Oid(2)).data, "new object");
}

TEST_P(Mvcc, AnotherProcesssCommitsBecomeVisibleOnlyAfterPolling) {
  const Tid t1 = create(1, "v1");
  inst_->poll_invalidations();
  EXPECT_EQ(inst_->load(Oid(1)).data, "v1");
  auto other = reopen()->new_instance();
  commit(*other, {{1, "v2"}}, {{1, t1}});
  EXPECT_EQ(inst_->load(Oid(1)).data, "v1");
  inst_->sync();
  EXPECT_EQ(inst_->load(Oid(1)).data, "v2");
}

// Line 35: a database emptied (or restored to an earlier point) behind an instance takes
// the instance's own commits with it: the poll says "everything" and the states are gone.
// The check compared with the last snapshot only, so commits made since were kept.
TEST_P(Mvcc, ADatabaseZappedBehindAnInstanceTakesItsOwnCommitsToo) {
  inst_->poll_invalidations();  // a snapshot of the empty database
  commit(*inst_, {{1, "mine"}});
  inst_->release_snapshot();
  reopen()->zap_all();  // another storage on the same database
  EXPECT_FALSE(inst_->poll_invalidations().has_value());
  EXPECT_THROW(inst_->load(Oid(1)), POSKeyError);
  EXPECT_EQ(inst_->last_transaction(), Tid(0));
  // And through the same storage, without a snapshot taken before the commit, and with
  // another own commit after the zap.
  auto writer = storage_->new_instance();
  commit(*writer, {{2, "mine too"}});
  storage_->zap_all();
  commit(*writer, {{3, "after the zap"}});
  EXPECT_FALSE(writer->poll_invalidations().has_value());
  EXPECT_THROW(writer->load(Oid(2)), POSKeyError);
  EXPECT_EQ(writer->load(Oid(3)).data, "after the zap");
}

TEST_P(Mvcc, LoadsAreConsistentWithTheSnapshot) {
  // Two objects always changed together must never be seen half-updated.
  Tid ta = create(1, "0");
  Tid tb = create(2, "0");
  auto reader = storage_->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "0");
  for (int i = 1; i <= 5; ++i) {
    const Tid t =
        commit(*inst_, {{1, std::to_string(i)}, {2, std::to_string(i)}}, {{1, ta}, {2, tb}});
    ta = tb = t;
    // The reader has not polled: its snapshot is still the one before these commits.
    EXPECT_EQ(reader->load(Oid(2)).data, "0");
    EXPECT_EQ(reader->load(Oid(1)).data, "0");
  }
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(2)).data, "5");
}

// Line 34 for the other reads: load_before, history and record_iternext answer from the
// same snapshot as load, not from whatever was committed since.
TEST_P(Mvcc, EveryReadAnswersFromTheSnapshot) {
  auto [reader, t1, t2] = snapshot_then_commits();

  const auto before = reader->load_before(Oid(1), Tid(~uint64_t{0}));
  ASSERT_TRUE(before);
  EXPECT_EQ(before->data, "v1");
  EXPECT_EQ(before->start, t1);
  EXPECT_FALSE(before->end) << "v1 is current in the reader's snapshot";
  EXPECT_THROW(reader->load_before(Oid(2), Tid(~uint64_t{0})), POSKeyError);
  const auto first = reader->record_iternext(std::nullopt);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->oid, Oid(1));
  EXPECT_EQ(first->data, "v1");
  EXPECT_EQ(first->tid, t1);
  EXPECT_FALSE(first->next) << "oid 2 is not in the reader's snapshot";
  if (storage_->keep_history()) {
    const auto h = reader->history(Oid(1), 10);
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].tid, t1);
  }

  reader->poll_invalidations();
  const auto after = reader->load_before(Oid(1), Tid(~uint64_t{0}));
  ASSERT_TRUE(after);
  EXPECT_EQ(after->data, "v2");
  EXPECT_EQ(after->start, t2);
  const auto again = reader->record_iternext(std::nullopt);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->data, "v2");
  EXPECT_EQ(again->next, Oid(2));
  if (storage_->keep_history()) {
    EXPECT_EQ(reader->history(Oid(1), 10).size(), 2u);
  }
}

// A deletion committed by another instance leaves the object readable, as it was, in a
// snapshot from before it.
TEST_P(Mvcc, AnObjectDeletedSinceTheSnapshotIsStillThere) {
  const Tid t1 = create(1, "kept");
  const Tid t2 = create(2, "deleted later");
  auto reader = storage_->new_instance();
  reader->poll_invalidations();
  remove(2, t2);
  EXPECT_EQ(reader->load(Oid(2)).data, "deleted later");
  const auto first = reader->record_iternext(std::nullopt);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->tid, t1);
  ASSERT_EQ(first->next, Oid(2));
  const auto second = reader->record_iternext(first->next);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->data, "deleted later");
}

TEST_P(Mvcc, ReleasingTheSnapshotThenReadingSeesNewData) {
  const Tid t1 = create(1, "v1");
  auto reader = storage_->new_instance();
  EXPECT_EQ(reader->load(Oid(1)).data, "v1");
  reader->release_snapshot();
  commit(*inst_, {{1, "v2"}}, {{1, t1}});
  EXPECT_EQ(reader->load(Oid(1)).data, "v2");
  // The change found while reading is reported by the next poll.
  const auto inv = reader->poll_invalidations();
  ASSERT_TRUE(inv);
  EXPECT_EQ(*inv, std::vector<Oid>{Oid(1)});
}

// Line 35.
TEST_P(Mvcc, PollReturnsExactlyWhatOthersChanged) {
  const Tid t1 = create(1, "a");
  const Tid t2 = create(2, "b");
  create(3, "c");
  auto reader = storage_->new_instance();
  const auto first = reader->poll_invalidations();
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->empty());
  auto writer = reopen()->new_instance();
  commit(*writer, {{1, "a2"}}, {{1, t1}});
  commit(*writer, {{2, "b2"}, {4, "d"}}, {{2, t2}});
  const auto inv = reader->poll_invalidations();
  ASSERT_TRUE(inv);
  EXPECT_EQ(sorted(*inv), (std::vector<Oid>{Oid(1), Oid(2), Oid(4)}));
  const auto none = reader->poll_invalidations();
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_P(Mvcc, PollExcludesTheInstancesOwnCommits) {
  const Tid t1 = create(1, "a");
  inst_->poll_invalidations();
  auto other = storage_->new_instance();
  commit(*inst_, {{1, "mine"}}, {{1, t1}});
  commit(*other, {{2, "theirs"}});
  const auto inv = inst_->poll_invalidations();
  ASSERT_TRUE(inv);
  EXPECT_EQ(*inv, std::vector<Oid>{Oid(2)});
  EXPECT_EQ(inst_->load(Oid(1)).data, "mine");
}

TEST_P(Mvcc, PollSaysEverythingWhenTheDatabaseWentBack) {
  create(1, "a");
  auto reader = storage_->new_instance();
  reader->poll_invalidations();
  reader->load(Oid(1));
  storage_->zap_all();
  const auto inv = reader->poll_invalidations();
  EXPECT_FALSE(inv.has_value()) << "a zapped database must invalidate everything";
}

// A zap, then a commit, before the reader polls: the last TID is past the one the reader
// saw, yet its states are gone. The poll must still say "everything" (design.md §4).
TEST_P(Mvcc, AZapFollowedByACommitStillInvalidatesEverything) {
  create(1, "a");
  create(2, "b");
  auto reader = storage_->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "a");
  EXPECT_EQ(reader->load(Oid(2)).data, "b");
  for (int round = 0; round < 2; ++round) {  // the second zap comes after the first
    SCOPED_TRACE(round);
    auto zapper = reopen();
    if (round == 1) {  // and after a deletion
      auto deleter = zapper->new_instance();
      TransactionMetaData txn{"", "", ""};
      deleter->tpc_begin(txn);
      deleter->delete_object(Oid(3), deleter->load(Oid(3)).tid, txn);
      deleter->tpc_vote(txn);
      deleter->tpc_finish(txn);
    }
    zapper->zap_all();
    auto writer = zapper->new_instance();
    commit(*writer, {{3, "after the zap " + std::to_string(round)}});
    EXPECT_FALSE(reader->poll_invalidations().has_value());
    EXPECT_THROW(reader->load(Oid(1)), POSKeyError);
    EXPECT_THROW(reader->load(Oid(2)), POSKeyError);
    EXPECT_EQ(reader->load(Oid(3)).data, "after the zap " + std::to_string(round));
    const auto quiet = reader->poll_invalidations();
    ASSERT_TRUE(quiet);
    EXPECT_TRUE(quiet->empty());
  }
  // A zap in the past is no reason for a newcomer's polls to say "everything".
  auto newcomer = storage_->new_instance();
  commit(*newcomer, {{9, "new"}});
  auto other = storage_->new_instance();
  other->poll_invalidations();
  commit(*other, {{10, "other"}});
  const auto listed = newcomer->poll_invalidations();
  // (What the list holds for an instance's very first poll differs: the file backend
  // lists nothing, the database ones what changed since its own first commit.)
  ASSERT_TRUE(listed) << "a zap before this instance began made its poll say everything";
  EXPECT_EQ(std::count(listed->begin(), listed->end(), Oid(9)), 0);
}

// The history replaced by one that starts with the same transaction but lacks the one the
// reader saw last (convert --clear from an older copy of the source), then carried past
// it: neither the history's start nor the last TID tells, so the reader's own last
// transaction being gone must. Its cached state of object 1 is not the current one.
TEST_P(Mvcc, AHistoryReplacedFromTheSameStartStillInvalidatesEverything) {
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}}, {{1, t1}});
  auto reader = storage_->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "b");
  auto zapper = reopen();
  zapper->zap_all();
  auto writer = zapper->new_instance();
  const Tid t3(t2.value() + 1000);
  for (const auto& [tid, oid, data] :
       {std::tuple{t1, 1, "a"}, std::tuple{t3, 2, "after the reader's last transaction"}}) {
    TransactionMetaData txn{"", "", ""};
    writer->tpc_begin(txn, tid);
    writer->restore(Oid(oid), tid, std::string(data), txn);
    writer->tpc_vote(txn);
    writer->tpc_finish(txn);
  }
  EXPECT_FALSE(reader->poll_invalidations().has_value());
  EXPECT_EQ(reader->load(Oid(1)).data, "a");
  EXPECT_EQ(reader->load(Oid(2)).data, "after the reader's last transaction");
}

// A zapped database filled again with other bytes under some of the same (oid, tid)
// keys (convert --clear from another source): a reader whose storage cached the old bytes
// is told "everything", and from then on reads the new bytes, every time.
TEST_P(Mvcc, ADatabaseRefilledWithOtherBytesUnderTheSameTidsIsNotReadFromTheCache) {
  auto restore = [](StorageInstance& writer, uint64_t tid, uint64_t oid, const char* data) {
    TransactionMetaData txn{"", "", ""};
    writer.tpc_begin(txn, Tid(tid));
    writer.restore(Oid(oid), Tid(tid), data, txn);
    writer.tpc_vote(txn);
    writer.tpc_finish(txn);
  };
  restore(*inst_, 2, 1, "a");
  restore(*inst_, 3, 1, "b");
  restore(*inst_, 4, 2, "c");
  auto reader_storage = reopen();
  auto reader = reader_storage->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "b");
  {
    auto zapper = reopen();
    zapper->zap_all();
    auto writer = zapper->new_instance();
    restore(*writer, 1, 2, "W");
    restore(*writer, 2, 1, "X");
    restore(*writer, 3, 1, "Y");
    restore(*writer, 4, 2, "Z");
  }
  // An instance begun after the refill (a new ZODB connection) has nothing to compare
  // with; its storage does.
  auto newcomer = reader_storage->new_instance();
  EXPECT_EQ(newcomer->load(Oid(1)).data, "Y");
  EXPECT_EQ(newcomer->load(Oid(1)).data, "Y");
  EXPECT_EQ(newcomer->load_serial(Oid(1), Tid(3)), "Y");
  EXPECT_FALSE(reader->poll_invalidations().has_value());
  EXPECT_EQ(reader->load(Oid(1)).data, "Y");
  EXPECT_EQ(reader->load(Oid(1)).data, "Y");
  EXPECT_EQ(reader->load_serial(Oid(1), Tid(3)), "Y");
  EXPECT_EQ(reader_storage->new_instance()->load(Oid(1)).data, "Y");
}

// The same after a deletion (history-free databases record its TID apart from the rows):
// a zapped database is empty again, last_transaction zero.
TEST_P(Mvcc, AZapAfterADeletionLeavesAnEmptyDatabase) {
  create(1, "a");
  const Tid t2 = create(2, "b");
  remove(2, t2);
  auto reader = storage_->new_instance();
  reader->poll_invalidations();
  reader->load(Oid(1));
  storage_->zap_all();
  EXPECT_FALSE(reader->poll_invalidations().has_value());
  EXPECT_EQ(reader->last_transaction(), Tid(0));
  EXPECT_EQ(storage_->new_instance()->last_transaction(), Tid(0));
  EXPECT_EQ(storage_->info().last_tid, Tid(0));
}

RELSTORE_CONFORMANCE_SUITE(Mvcc);

}  // namespace
}  // namespace relstore::conformance
