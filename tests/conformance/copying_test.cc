// Copying: conformance.md lines 29–30.
#include "conformance/fixture.h"
#include "relstore/copy.h"
#include "relstore/timestamp.h"

namespace relstore::conformance {
namespace {

using namespace std::string_literals;

using Copying = StorageTest;

std::vector<TransactionRecord> all_transactions(StorageInstance& inst) {
  std::vector<TransactionRecord> out;
  auto it = inst.iterator();
  TransactionRecord rec;
  while (it->next(rec)) out.push_back(rec);
  return out;
}

// Line 29.
TEST_P(Copying, RestoreDoesNoConflictChecksAndKeepsTheSerial) {
  const Tid t1 = create(1, "v1");
  const Tid later = Tid(t1.value() + 1000);
  TransactionMetaData txn{"restorer", "restored", "ext"};
  inst_->tpc_begin(txn, later);
  inst_->restore(Oid(1), later, std::string("restored over v1"), txn);  // no serial check
  EXPECT_TRUE(inst_->tpc_vote(txn).empty());
  EXPECT_EQ(inst_->tpc_finish(txn), later);
  auto fresh = reopen()->new_instance();
  EXPECT_EQ(fresh->load(Oid(1)).data, "restored over v1");
  EXPECT_EQ(fresh->load(Oid(1)).tid, later);
}

TEST_P(Copying, RestoreOfNoneDataWritesAnAbsentRecord) {
  const Tid t1 = create(1, "v1");
  const Tid t2 = Tid(t1.value() + 10);
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn, t2);
  inst_->restore(Oid(1), t2, std::nullopt, txn);
  inst_->tpc_vote(txn);
  inst_->tpc_finish(txn);
  auto fresh = reopen()->new_instance();
  EXPECT_THROW(fresh->load(Oid(1)), POSKeyError);
  if (hp()) {
    EXPECT_EQ(fresh->load_serial(Oid(1), t1), "v1");
  }
}

TEST_P(Copying, TpcBeginKeepsTidAndStatus) {
  const Tid tid = TimeStamp(2020, 2, 2, 2, 2, 2).tid();
  TransactionMetaData txn{"", "packed one", ""};
  inst_->tpc_begin(txn, tid, 'p');
  inst_->restore(Oid(1), tid, std::string("x"), txn);
  inst_->tpc_vote(txn);
  EXPECT_EQ(inst_->tpc_finish(txn), tid);
  const auto txns = all_transactions(*inst_);
  ASSERT_EQ(txns.size(), 1u);
  EXPECT_EQ(txns[0].tid, tid);
  // History-free databases have no transaction table to hold a status.
  EXPECT_EQ(txns[0].status, hp() ? 'p' : ' ');
}

TEST_P(Copying, RestoreSerialMustMatchTheTransactionTid) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn, Tid(100));
  EXPECT_THROW(inst_->restore(Oid(1), Tid(101), std::string("x"), txn), StorageTransactionError);
  inst_->tpc_abort(txn);
}

// Line 30.
TEST_P(Copying, CopyTransactionsMakesADeepEqualCopy) {
  const std::string ext = "\x80\x03}q\x00."s;
  const Tid t1 = commit(*inst_, {{1, "a"}, {2, std::string("b\0b", 3)}}, {}, "u1", "d1", ext);
  const Tid t2 = commit(*inst_, {{1, "a2"}}, {{1, t1}}, "u2", "d2", "");
  TransactionMetaData del{"u3", "delete", ""};
  inst_->tpc_begin(del);
  inst_->delete_object(Oid(2), t1, del);
  inst_->tpc_vote(del);
  inst_->tpc_finish(del);
  (void)t2;

  const std::string dst_uri = context_->fresh_uri();
  auto dst_storage = open_storage(dst_uri);
  auto dst = dst_storage->new_instance();
  const CopyStats stats = copy_transactions(*inst_, *dst);
  EXPECT_GE(stats.transactions, 1u);

  const auto a = all_transactions(*inst_);
  const auto b = all_transactions(*dst);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tid, b[i].tid);
    EXPECT_EQ(a[i].status, b[i].status);
    EXPECT_EQ(a[i].user, b[i].user);
    EXPECT_EQ(a[i].description, b[i].description);
    EXPECT_EQ(a[i].extension, b[i].extension);
    ASSERT_EQ(a[i].records.size(), b[i].records.size());
    for (size_t j = 0; j < a[i].records.size(); ++j) {
      EXPECT_EQ(a[i].records[j].oid, b[i].records[j].oid);
      EXPECT_EQ(a[i].records[j].tid, b[i].records[j].tid);
      EXPECT_EQ(a[i].records[j].data, b[i].records[j].data);
    }
  }
  EXPECT_EQ(dst->load(Oid(1)).data, "a2");
  EXPECT_THROW(dst->load(Oid(2)), POSKeyError);
  if (hp()) {
    EXPECT_EQ(dst->last_transaction(), inst_->last_transaction());
  }
}

RELSTORE_CONFORMANCE_SUITE(Copying);

}  // namespace
}  // namespace relstore::conformance
