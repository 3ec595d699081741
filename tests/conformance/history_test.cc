// History and iteration: conformance.md lines 18–21.
#include <limits>

#include "conformance/fixture.h"
#include "relstore/timestamp.h"

namespace relstore::conformance {
namespace {

using namespace std::string_literals;

using HistoryAndIteration = StorageTest;

std::vector<TransactionRecord> all_transactions(StorageInstance& inst,
                                                std::optional<Tid> start = std::nullopt,
                                                std::optional<Tid> stop = std::nullopt) {
  std::vector<TransactionRecord> out;
  auto it = inst.iterator(start, stop);
  TransactionRecord rec;
  while (it->next(rec)) out.push_back(rec);
  return out;
}

// Line 18.
TEST_P(HistoryAndIteration, HistoryIsNewestFirstWithMetadata) {
  RELSTORE_HP_ONLY(18, "history-free storage keeps only the current revision");
  const std::string ext = "\x80\x03}q\x00X\x01\x00\x00\x00kq\x01K\x07s."s;
  const Tid t1 = commit(*inst_, {{1, "one"}}, {}, "alice", "first", ext);
  const Tid t2 = commit(*inst_, {{1, "two!"}}, {{1, t1}}, "bob", "second", "");
  const Tid t3 = commit(*inst_, {{1, "three"}}, {{1, t2}}, "carol", "third", "");
  const auto h = inst_->history(Oid(1), 10);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].tid, t3);
  EXPECT_EQ(h[1].tid, t2);
  EXPECT_EQ(h[2].tid, t1);
  EXPECT_EQ(h[2].user, "alice");
  EXPECT_EQ(h[2].description, "first");
  EXPECT_EQ(h[2].extension, ext);
  EXPECT_EQ(h[1].size, 4u);
  EXPECT_DOUBLE_EQ(h[0].time, TimeStamp(t3).unix_time());
}

TEST_P(HistoryAndIteration, HistoryReturnsAtMostN) {
  const Tid t1 = create(1, "one");
  const Tid t2 = commit(*inst_, {{1, "two"}}, {{1, t1}});
  const auto h = inst_->history(Oid(1), 1);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].tid, t2);
  EXPECT_EQ(h[0].size, 3u);
  EXPECT_EQ(inst_->history(Oid(1), 5).size(), hp() ? 2u : 1u);
}

// "At most n": n = 0 is no entry of an object that exists, and a size_t too large for
// SQL's LIMIT is all of them (PostgreSQL refused a negative LIMIT, and the failed statement
// left the instance unable to read until its next poll).
TEST_P(HistoryAndIteration, HistoryOfZeroOrOfEverything) {
  const Tid t1 = create(1, "one");
  commit(*inst_, {{1, "two"}}, {{1, t1}});
  EXPECT_TRUE(inst_->history(Oid(1), 0).empty());
  EXPECT_THROW(inst_->history(Oid(42), 0), POSKeyError);
  EXPECT_EQ(inst_->history(Oid(1), std::numeric_limits<size_t>::max()).size(), hp() ? 2u : 1u);
  EXPECT_EQ(inst_->load(Oid(1)).data, "two");
}

TEST_P(HistoryAndIteration, HistoryOfAnUnknownOidRaises) {
  create(1, "one");
  EXPECT_THROW(inst_->history(Oid(42), 5), POSKeyError);
}

// Line 19.
TEST_P(HistoryAndIteration, IteratorYieldsTransactionsInOrderWithVerbatimExtension) {
  const std::string ext1 = "\x80\x03}q\x00(X\x04\x00\x00\x00noteq\x01X\x02\x00\x00\x00\xc3\xa9u."s;
  const std::string ext2 = "not even a pickle \x00\xff"s;
  const Tid t1 = commit(*inst_, {{1, "a"}, {2, "b"}}, {}, "u1", "d1", ext1);
  const Tid t2 = commit(*inst_, {{1, "a2"}}, {{1, t1}}, "u2", "d2", ext2);
  const auto txns = all_transactions(*inst_);
  if (hp()) {
    ASSERT_EQ(txns.size(), 2u);
    EXPECT_EQ(txns[0].tid, t1);
    EXPECT_EQ(txns[0].status, ' ');
    EXPECT_EQ(txns[0].user, "u1");
    EXPECT_EQ(txns[0].description, "d1");
    EXPECT_EQ(txns[0].extension, ext1);
    ASSERT_EQ(txns[0].records.size(), 2u);
    EXPECT_EQ(txns[0].records[0].oid, Oid(1));
    EXPECT_EQ(txns[0].records[0].tid, t1);
    EXPECT_EQ(txns[0].records[0].data, "a");
    EXPECT_FALSE(txns[0].records[0].data_txn);
    EXPECT_EQ(txns[0].records[1].data, "b");
    EXPECT_EQ(txns[1].tid, t2);
    EXPECT_EQ(txns[1].extension, ext2);
    ASSERT_EQ(txns[1].records.size(), 1u);
    EXPECT_EQ(txns[1].records[0].data, "a2");
  } else {
    // History-free: one transaction per TID still holding current records.
    ASSERT_EQ(txns.size(), 2u);
    EXPECT_EQ(txns[0].tid, t1);
    ASSERT_EQ(txns[0].records.size(), 1u);
    EXPECT_EQ(txns[0].records[0].oid, Oid(2));
    EXPECT_EQ(txns[1].tid, t2);
    EXPECT_EQ(txns[1].records[0].data, "a2");
  }
}

TEST_P(HistoryAndIteration, IteratorRecordsCarryDeletionsAsAbsentData) {
  RELSTORE_HP_ONLY(19, "history-free storage drops deleted objects' rows");
  const Tid t1 = create(1, "a");
  const Tid t2 = remove(1, t1);
  const auto txns = all_transactions(*inst_, t2);
  ASSERT_EQ(txns.size(), 1u);
  ASSERT_EQ(txns[0].records.size(), 1u);
  EXPECT_FALSE(txns[0].records[0].data);
}

// Line 20.
TEST_P(HistoryAndIteration, IteratorBoundsAreInclusive) {
  std::vector<Tid> tids;
  for (uint64_t i = 1; i <= 5; ++i) tids.push_back(create(i, "x"));
  const auto mid = all_transactions(*inst_, tids[1], tids[3]);
  ASSERT_EQ(mid.size(), 3u);
  EXPECT_EQ(mid.front().tid, tids[1]);
  EXPECT_EQ(mid.back().tid, tids[3]);
  EXPECT_EQ(all_transactions(*inst_, tids[4]).size(), 1u);
  EXPECT_EQ(all_transactions(*inst_, std::nullopt, tids[0]).size(), 1u);
}

TEST_P(HistoryAndIteration, IteratorBoundsBetweenTids) {
  std::vector<Tid> tids;
  for (uint64_t i = 1; i <= 4; ++i) tids.push_back(create(i, "x"));
  const auto r = all_transactions(*inst_, Tid(tids[0].value() + 1), Tid(tids[2].value() + 1));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].tid, tids[1]);
  EXPECT_EQ(r[1].tid, tids[2]);
}

TEST_P(HistoryAndIteration, IteratorHandlesEmptyAndSingleRanges) {
  EXPECT_TRUE(all_transactions(*inst_).empty());
  const Tid t1 = create(1, "x");
  const Tid t2 = create(2, "y");
  EXPECT_TRUE(all_transactions(*inst_, Tid(t1.value() + 1), Tid(t2.value() - 1)).empty());
  EXPECT_TRUE(all_transactions(*inst_, Tid(t2.value() + 1)).empty());
  EXPECT_TRUE(all_transactions(*inst_, t2, t1).empty());
  const auto one = all_transactions(*inst_, t2, t2);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].tid, t2);
}

// Line 21.
TEST_P(HistoryAndIteration, IteratorSeesASnapshotNotLaterCommits) {
  create(1, "x");
  auto it = inst_->iterator();
  create(2, "y");
  TransactionRecord rec;
  int n = 0;
  while (it->next(rec)) ++n;
  EXPECT_EQ(n, 1);
}

TEST_P(HistoryAndIteration, IteratorIgnoresAVotedButUnfinishedTransaction) {
  create(1, "x");
  auto writer = storage_->new_instance();
  TransactionMetaData txn{"", "", ""};
  writer->tpc_begin(txn);
  writer->store(Oid(2), std::nullopt, "pending", txn);
  writer->tpc_vote(txn);
  EXPECT_EQ(all_transactions(*inst_).size(), 1u);
  writer->tpc_abort(txn);
}

TEST_P(HistoryAndIteration, EachTransactionsRecordsCanBeIteratedAgain) {
  commit(*inst_, {{1, "a"}, {2, "b"}, {3, "c"}});
  auto it = inst_->iterator();
  TransactionRecord rec;
  ASSERT_TRUE(it->next(rec));
  std::vector<Oid> first, second;
  for (const auto& r : rec.records) first.push_back(r.oid);
  for (const auto& r : rec.records) second.push_back(r.oid);
  EXPECT_EQ(first.size(), 3u);
  EXPECT_EQ(first, second);
}

RELSTORE_CONFORMANCE_SUITE(HistoryAndIteration);

}  // namespace
}  // namespace relstore::conformance
