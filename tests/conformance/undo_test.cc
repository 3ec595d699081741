// Undo: conformance.md lines 22-25 and 28 (undo after a pack), and line 31 for undo on a
// read-only storage (modes_test.cc).
#include <algorithm>
#include <vector>

#include "conformance/fixture.h"
#include "relstore/timestamp.h"

namespace relstore::conformance {
namespace {

// Undo needs history: Undo runs on the history-preserving databases, UndoWithoutHistory
// checks that the history-free ones have nothing to undo, and UndoOnFiles that a Data.fs
// (which ZODB's FileStorage undoes) refuses.
using Undo = StorageTest;
using UndoWithoutHistory = StorageTest;
using UndoOnFiles = StorageTest;

// Undoes the transactions `ids` in one commit; returns the OIDs each undo reported, in
// order, and the commit's TID.
std::pair<std::vector<Oid>, Tid> undo_all(StorageInstance& inst, const std::vector<Tid>& tids) {
  TransactionMetaData txn{"undoer", "undo", ""};
  inst.tpc_begin(txn);
  std::vector<Oid> oids;
  for (const Tid t : tids) {
    for (const Oid o : inst.undo(undo_id(t), txn)) oids.push_back(o);
  }
  inst.tpc_vote(txn);
  const Tid tid = inst.tpc_finish(txn);
  inst.sync();
  return {oids, tid};
}

std::string data_of(StorageInstance& inst, uint64_t oid) { return inst.load(Oid(oid)).data; }

// Line 22.
TEST_P(Undo, LogIsNewestFirstWithIdsAndMetadata) {
  const Tid t1 = commit(*inst_, {{0, "root"}}, {}, "ann", "first", "ext-1");
  const Tid t2 = commit(*inst_, {{1, "one"}}, {}, "bob", "second", "");
  inst_->sync();
  const auto log = inst_->undo_log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].tid, t2);
  EXPECT_EQ(log[1].tid, t1);
  EXPECT_EQ(log[0].id, undo_id(t2));
  EXPECT_EQ(tid_of_undo_id(log[0].id), t2);
  EXPECT_EQ(log[1].user, "ann");
  EXPECT_EQ(log[1].description, "first");
  EXPECT_EQ(log[1].extension, "ext-1");
  EXPECT_EQ(log[0].user, "bob");
  EXPECT_DOUBLE_EQ(log[0].time, TimeStamp(t2).unix_time());
}

// Line 22: first/last as ZODB's undoLog takes them, the default of 20, and a filter.
TEST_P(Undo, LogSlicesAndFilters) {
  std::vector<Tid> tids;  // oldest first
  for (int i = 0; i < 25; ++i) {
    tids.push_back(
        commit(*inst_, {{static_cast<uint64_t>(i), "v"}}, {}, "u", i % 2 ? "odd" : "even"));
  }
  inst_->sync();
  const auto newest = [&](size_t k) { return tids[tids.size() - 1 - k]; };
  const auto all = inst_->undo_log();
  ASSERT_EQ(all.size(), 20u);
  for (size_t k = 0; k < all.size(); ++k) EXPECT_EQ(all[k].tid, newest(k));
  const auto page = inst_->undo_log(5, 10);
  ASSERT_EQ(page.size(), 5u);
  EXPECT_EQ(page[0].tid, newest(5));
  EXPECT_EQ(page[4].tid, newest(9));
  const auto counted = inst_->undo_log(3, -4);  // four entries from the fourth
  ASSERT_EQ(counted.size(), 4u);
  EXPECT_EQ(counted[0].tid, newest(3));
  EXPECT_EQ(counted[3].tid, newest(6));
  EXPECT_TRUE(inst_->undo_log(10, 5).empty());
  EXPECT_EQ(inst_->undo_log(0, 100).size(), 25u);
  EXPECT_EQ(inst_->undo_log(20, 100).size(), 5u);
  const auto even =
      inst_->undo_log(1, 100, [](const UndoInfo& u) { return u.description == "even"; });
  ASSERT_EQ(even.size(), 12u);  // 13 even transactions, the newest skipped
  for (const auto& u : even) EXPECT_EQ(u.description, "even");
  EXPECT_EQ(even[0].tid, newest(2));
}

// Line 23: the latest change, and an older one that is still current.
TEST_P(Undo, UndoesTheLatestChangeAndAnOlderStillCurrentOne) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}}, {{1, t1}});
  const Tid t3 = create(2, "other");
  // t2 is not the newest transaction, but its state of object 1 is still current.
  const auto [oids, u] = undo_all(*inst_, {t2});
  EXPECT_EQ(oids, std::vector<Oid>{Oid(1)});
  EXPECT_EQ(data_of(*inst_, 1), "a");
  EXPECT_EQ(inst_->load(Oid(1)).tid, u);
  EXPECT_EQ(data_of(*inst_, 2), "other");
  EXPECT_EQ(inst_->history(Oid(1), 10).size(), 3u);
  EXPECT_GT(u, t3);
  // The undo is itself a transaction in the log.
  EXPECT_EQ(inst_->undo_log(0, 1).at(0).tid, u);
  EXPECT_EQ(inst_->undo_log(0, 1).at(0).description, "undo");
}

// The record of `oid` in transaction `tid`, as the iterator gives it.
DataRecord record_of(StorageInstance& inst, Tid tid, uint64_t oid) {
  auto it = inst.iterator(tid, tid);
  TransactionRecord txn;
  EXPECT_TRUE(it->next(txn));
  for (const auto& r : txn.records) {
    if (r.oid == Oid(oid)) return r;
  }
  ADD_FAILURE() << "no record of oid " << oid << " in " << tid.hex();
  return {};
}

// Line 25: an undo's record names the revision whose data it repeats (data_txn), and so
// does a redo's; records written by stores name none, nor does an undone creation's.
TEST_P(Undo, RecordsOfAnUndoNameTheRevisionTheyCopy) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}}, {{1, t1}});
  const Tid made = create(2, "new");
  const auto [oids, u] = undo_all(*inst_, {t2});
  DataRecord r = record_of(*inst_, u, 1);
  EXPECT_EQ(r.data, "a");
  EXPECT_EQ(r.data_txn, t1);
  const auto [again, redo] = undo_all(*inst_, {u});
  r = record_of(*inst_, redo, 1);
  EXPECT_EQ(r.data, "b");
  EXPECT_EQ(r.data_txn, t2);
  EXPECT_FALSE(record_of(*inst_, t2, 1).data_txn);
  EXPECT_FALSE(record_of(*inst_, t1, 1).data_txn);
  const auto [gone, unmade] = undo_all(*inst_, {made});
  r = record_of(*inst_, unmade, 2);
  EXPECT_FALSE(r.data);
  EXPECT_FALSE(r.data_txn);
}

// Line 23: undoing a creation makes the object disappear; undoing that undo brings it back.
TEST_P(Undo, UndoOfACreationAndRedo) {
  create(0, "root");
  const Tid created = create(1, "born");
  const auto [oids, u] = undo_all(*inst_, {created});
  EXPECT_EQ(oids, std::vector<Oid>{Oid(1)});
  EXPECT_THROW(inst_->load(Oid(1)), POSKeyError);
  const auto [redone, r] = undo_all(*inst_, {u});
  EXPECT_EQ(redone, std::vector<Oid>{Oid(1)});
  EXPECT_EQ(data_of(*inst_, 1), "born");
  EXPECT_EQ(inst_->load(Oid(1)).tid, r);
}

// Line 23: a transaction of several objects, and several undos in one transaction, two of
// them of the same object (the second judged by the state the first gave it).
TEST_P(Undo, MultiObjectTransactionsAndSeveralUndosInOne) {
  create(0, "root");
  const Tid t1 = commit(*inst_, {{1, "a1"}, {2, "a2"}, {3, "a3"}});
  const Tid t2 = commit(*inst_, {{1, "b1"}, {3, "b3"}}, {{1, t1}, {3, t1}});
  const Tid t3 = commit(*inst_, {{2, "c2"}}, {{2, t1}});
  const Tid t4 = commit(*inst_, {{1, "d1"}}, {{1, t2}});
  const auto [oids, u] = undo_all(*inst_, {t4, t2, t3});
  EXPECT_EQ(oids, (std::vector<Oid>{Oid(1), Oid(1), Oid(3), Oid(2)}));
  EXPECT_EQ(data_of(*inst_, 1), "a1");
  EXPECT_EQ(data_of(*inst_, 2), "a2");
  EXPECT_EQ(data_of(*inst_, 3), "a3");
  for (uint64_t oid = 1; oid <= 3; ++oid) EXPECT_EQ(inst_->load(Oid(oid)).tid, u);
}

// Line 24: a later change to the same object refuses the undo; the commit can be aborted
// and nothing changed.
TEST_P(Undo, RefusedWhenALaterTransactionChangedTheObject) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}, {2, "x"}}, {{1, t1}});
  const Tid t3 = commit(*inst_, {{1, "c"}}, {{1, t2}});
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  try {
    inst_->undo(undo_id(t2), txn);
    ADD_FAILURE() << "the undo was not refused";
  } catch (const UndoError& e) {
    EXPECT_EQ(e.oid(), Oid(1));
    EXPECT_NE(std::string(e.what()).find(t3.hex()), std::string::npos) << e.what();
  }
  inst_->tpc_abort(txn);
  inst_->sync();
  EXPECT_EQ(data_of(*inst_, 1), "c");
  EXPECT_EQ(data_of(*inst_, 2), "x");
  // An undo the refusal did not touch still works in a new commit.
  EXPECT_EQ(undo_all(*inst_, {t3}).first, std::vector<Oid>{Oid(1)});
  EXPECT_EQ(data_of(*inst_, 1), "b");
}

// Line 24: a conflict resolver may merge the undo with the later change, given the undone
// state as the old one, the current as the committed one and the earlier as the new one.
TEST_P(Undo, AConflictResolverMayMergeTheLaterChange) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}}, {{1, t1}});
  const Tid t3 = commit(*inst_, {{1, "c"}}, {{1, t2}});
  std::vector<std::string> seen;
  storage_->set_conflict_resolver([&](const ConflictInput& in) -> std::optional<Bytes> {
    seen = {in.old_state ? *in.old_state : "(none)", in.committed_state, in.new_state};
    EXPECT_EQ(in.committed_serial, t3);
    return Bytes("merged");
  });
  const auto [oids, u] = undo_all(*inst_, {t2});
  EXPECT_EQ(oids, std::vector<Oid>{Oid(1)});
  EXPECT_EQ(seen, (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_EQ(data_of(*inst_, 1), "merged");
  EXPECT_EQ(inst_->load(Oid(1)).tid, u);
}

// RelStorage's rule: the root's creation cannot be undone (nothing could get it back).
TEST_P(Undo, TheRootsCreationCannotBeUndone) {
  const Tid t0 = create(0, "root");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  EXPECT_THROW(inst_->undo(undo_id(t0), txn), UndoError);
  inst_->tpc_abort(txn);
  EXPECT_EQ(data_of(*inst_, 0), "root");
}

TEST_P(Undo, AnUnknownOrMalformedIdIsRefused) {
  const Tid t0 = create(0, "root");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  EXPECT_THROW(inst_->undo("not an id", txn), UndoError);
  EXPECT_THROW(inst_->undo(undo_id(Tid(t0.value() - 1)), txn), UndoError);
  EXPECT_THROW(inst_->undo(undo_id(Tid(t0.value() + 1)), txn), UndoError);
  // Outside a commit: the transaction begun is the one undo belongs to.
  TransactionMetaData other{"", "", ""};
  EXPECT_THROW(inst_->undo(undo_id(t0), other), StorageTransactionError);
  inst_->tpc_abort(txn);
}

// A commit that changes an undone object between undo and vote is a conflict, as for a
// store of a stale serial.
TEST_P(Undo, AChangeBetweenUndoAndVoteConflicts) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}}, {{1, t1}});
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->undo(undo_id(t2), txn);
  auto other = storage_->new_instance();
  commit(*other, {{1, "c"}}, {{1, t2}});
  EXPECT_THROW(inst_->tpc_vote(txn), ConflictError);
  inst_->tpc_abort(txn);
  inst_->sync();
  EXPECT_EQ(data_of(*inst_, 1), "c");
}

// Line 28: after a pack, transactions after the pack time keep their ids and can still be
// undone; the packed ones leave the log and cannot be undone.
TEST_P(Undo, UndoKeepsWorkingAfterAPack) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  const Tid t2 = commit(*inst_, {{1, "b"}}, {{1, t1}});
  const Tid t3 = commit(*inst_, {{1, "c"}}, {{1, t2}});
  inst_->sync();
  const auto before = inst_->undo_log();
  PackOptions options;
  options.pack_tid = t2;
  options.gc = false;
  storage_->pack(options);
  inst_->sync();
  const auto after = inst_->undo_log();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].tid, t3);
  EXPECT_EQ(after[0].id, before[0].id);
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  EXPECT_THROW(inst_->undo(undo_id(t1), txn), UndoError);
  inst_->tpc_abort(txn);
  EXPECT_EQ(undo_all(*inst_, {t3}).first, std::vector<Oid>{Oid(1)});
  EXPECT_EQ(data_of(*inst_, 1), "b");
}

TEST_P(UndoWithoutHistory, NothingToUndo) {
  create(0, "root");
  const Tid t1 = create(1, "a");
  inst_->sync();
  EXPECT_TRUE(inst_->undo_log().empty());
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  EXPECT_THROW(inst_->undo(undo_id(t1), txn), UndoError);
  inst_->tpc_abort(txn);
  EXPECT_EQ(data_of(*inst_, 1), "a");
}

TEST_P(UndoOnFiles, ADataFsIsNotUndoneByRelstore) {
  const Tid t1 = create(1, "a");
  inst_->sync();
  EXPECT_THROW(inst_->undo_log(), StorageError);
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  EXPECT_THROW(inst_->undo(undo_id(t1), txn), StorageError);
  inst_->tpc_abort(txn);
  EXPECT_EQ(data_of(*inst_, 1), "a");
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Conformance, Undo, ::testing::ValuesIn(database_backends(true)),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Conformance, UndoWithoutHistory,
                         ::testing::ValuesIn(database_backends(false)), backend_name);
INSTANTIATE_TEST_SUITE_P(Conformance, UndoOnFiles, ::testing::ValuesIn(file_backends()),
                         backend_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Undo);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(UndoWithoutHistory);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(UndoOnFiles);

}  // namespace relstore::conformance
