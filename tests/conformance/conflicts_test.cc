// Conflict resolution: conformance.md lines 16–17.
#include <stdexcept>

#include "conformance/fixture.h"

namespace relstore::conformance {
namespace {

using ConflictResolution = StorageTest;

// States are decimal counters; the resolver adds both sides' increments to the old value,
// as BTrees.Length does.
std::optional<Bytes> merge_counters(const ConflictInput& in) {
  if (!in.old_state) return std::nullopt;
  const long old = std::stol(*in.old_state);
  const long committed = std::stol(in.committed_state);
  const long mine = std::stol(in.new_state);
  return std::to_string(committed + mine - old);
}

// Line 16.
TEST_P(ConflictResolution, AResolverThatMergesMakesTheMergedStateStored) {
  storage_->set_conflict_resolver(merge_counters);
  const Tid t1 = create(1, "10");
  auto a = storage_->new_instance();
  auto b = storage_->new_instance();
  EXPECT_EQ(a->load(Oid(1)).data, "10");
  EXPECT_EQ(b->load(Oid(1)).data, "10");
  commit(*a, {{1, "13"}}, {{1, t1}});  // +3

  TransactionMetaData txn{"", "", ""};
  b->tpc_begin(txn);
  b->store(Oid(1), t1, "15", txn);  // +5 from the same old state
  const auto resolved = b->tpc_vote(txn);
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0], Oid(1));
  const Tid tb = b->tpc_finish(txn);

  EXPECT_EQ(b->load(Oid(1)).data, "18");
  a->poll_invalidations();
  EXPECT_EQ(a->load(Oid(1)).data, "18");
  EXPECT_EQ(a->load(Oid(1)).tid, tb);
  auto fresh = reopen()->new_instance();
  EXPECT_EQ(fresh->load(Oid(1)).data, "18");
}

// An object stored twice in one transaction is one record: the first serial, the last
// state, resolved once and reported once (the file backend resolved it once per store).
TEST_P(ConflictResolution, AnObjectStoredTwiceIsResolvedOnce) {
  storage_->set_conflict_resolver(merge_counters);
  const Tid t1 = create(1, "10");
  commit(*storage_->new_instance(), {{1, "11"}}, {{1, t1}});  // +1
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), t1, "12", txn);
  inst_->store(Oid(1), t1, "13", txn);  // +3, the state that counts
  EXPECT_EQ(inst_->tpc_vote(txn), std::vector<Oid>{Oid(1)});
  inst_->tpc_finish(txn);
  EXPECT_EQ(reopen()->new_instance()->load(Oid(1)).data, "14");
}

TEST_P(ConflictResolution, ResolvedObjectsAreReportedOnlyWhenResolved) {
  storage_->set_conflict_resolver(merge_counters);
  const Tid t1 = create(1, "1");
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store(Oid(1), t1, "2", txn);
  inst_->store(Oid(2), std::nullopt, "new", txn);
  EXPECT_TRUE(inst_->tpc_vote(txn).empty());
  inst_->tpc_finish(txn);
}

// Line 17.
TEST_P(ConflictResolution, AResolverThatCannotResolveEndsInConflictError) {
  storage_->set_conflict_resolver([](const ConflictInput&) { return std::nullopt; });
  const Tid t1 = create(1, "10");
  const Tid t2 = commit(*inst_, {{1, "11"}}, {{1, t1}});
  try {
    commit(*inst_, {{1, "12"}}, {{1, t1}});
    FAIL() << "no ConflictError";
  } catch (const ConflictError& e) {
    EXPECT_EQ(*e.oid(), Oid(1));
    EXPECT_EQ(e.serials()->first, t2);
    EXPECT_EQ(e.serials()->second, t1);
  }
  EXPECT_EQ(inst_->load(Oid(1)).data, "11");
}

TEST_P(ConflictResolution, AResolverThatFailsEndsInConflictErrorAndNothingElse) {
  storage_->set_conflict_resolver(
      [](const ConflictInput&) -> std::optional<Bytes> { throw std::runtime_error("boom"); });
  const Tid t1 = create(1, "10");
  commit(*inst_, {{1, "11"}}, {{1, t1}});
  EXPECT_THROW(commit(*inst_, {{1, "12"}}, {{1, t1}}), ConflictError);
  // The storage is still usable.
  EXPECT_EQ(inst_->load(Oid(1)).data, "11");
  create(2, "fine");
}

// An empty state is no pickle (and FileStorage cannot store one): a resolver returning it
// has failed, like one that throws.
TEST_P(ConflictResolution, AResolverReturningAnEmptyStateEndsInConflictError) {
  storage_->set_conflict_resolver([](const ConflictInput&) { return std::optional<Bytes>(""); });
  const Tid t1 = create(1, "10");
  commit(*inst_, {{1, "11"}}, {{1, t1}});
  EXPECT_THROW(commit(*inst_, {{1, "12"}}, {{1, t1}}), ConflictError);
  EXPECT_EQ(inst_->load(Oid(1)).data, "11");
}

TEST_P(ConflictResolution, WithoutAResolverAConflictIsAConflictError) {
  const Tid t1 = create(1, "10");
  commit(*inst_, {{1, "11"}}, {{1, t1}});
  EXPECT_THROW(commit(*inst_, {{1, "12"}}, {{1, t1}}), ConflictError);
}

RELSTORE_CONFORMANCE_SUITE(ConflictResolution);

}  // namespace
}  // namespace relstore::conformance
