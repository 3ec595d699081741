// Pack: conformance.md lines 26, 27, 31 (pack refused read-only) and 33 (pack removes a
// deleted object); zodbpack's --prepack-only and --check-refs (design.md §8).
#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "conformance/fixture.h"
#include "relstore/json_mirror.h"
#include "relstore/ops.h"
#include "support/commits.h"

namespace relstore::conformance {
namespace {

// relstore packs databases: Pack runs on those, PackOnFiles checks that a Data.fs (which
// ZODB's zodbpack packs) refuses. Each executable instantiates the one its backend has.
using Pack = StorageTest;
using PackOnFiles = StorageTest;
const Tid kMax(std::numeric_limits<uint64_t>::max());

std::string node(const std::vector<uint64_t>& children) { return testing::mapping_of(children); }

PackOptions to(Tid tid, bool gc = true) {
  PackOptions o;
  o.pack_tid = tid;
  o.gc = gc;
  return o;
}

bool gone(StorageInstance& inst, uint64_t oid) {
  inst.sync();
  try {
    inst.load(Oid(oid));
    return false;
  } catch (const POSKeyError&) {
    return true;
  }
}

TEST_P(PackOnFiles, FileStorageCannotPack) {
  create(0, node({}));
  EXPECT_THROW(storage_->pack(to(kMax)), StorageError);
}

// Line 26: superseded revisions at or before the pack time go; the one current then and
// later ones stay.
TEST_P(Pack, RemovesRevisionsSupersededAtThePackTime) {
  create(0, node({1}));
  const Tid t1 = create(1, node({}));
  const Tid t2 = commit(*inst_, {{1, node({}) + "2"}}, {{1, t1}});
  const Tid t3 = commit(*inst_, {{1, node({}) + "3"}}, {{1, t2}});
  const PackResult r = storage_->pack(to(t2));
  EXPECT_EQ(r.pack_tid, t2);
  EXPECT_EQ(r.objects_removed, 0u);
  inst_->sync();
  EXPECT_EQ(inst_->load(Oid(1)).data, node({}) + "3");
  EXPECT_EQ(inst_->load(Oid(1)).tid, t3);
  if (!hp()) return;
  EXPECT_EQ(r.revisions_removed, 1u);
  EXPECT_THROW(inst_->load_serial(Oid(1), t1), POSKeyError);
  EXPECT_EQ(inst_->load_serial(Oid(1), t2), node({}) + "2");
  const auto history = inst_->history(Oid(1), 10);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].tid, t3);
  EXPECT_EQ(history[1].tid, t2);
  // t1 had only the superseded revision: it went, and the transactions up to t2 are packed.
  auto it = inst_->iterator();
  TransactionRecord txn;
  std::vector<std::pair<Tid, char>> seen;
  while (it->next(txn)) seen.emplace_back(txn.tid, txn.status);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1], std::make_pair(t2, 'p'));
  EXPECT_EQ(seen[2], std::make_pair(t3, ' '));
}

// Line 26: with GC, what the root does not reach goes; what it reaches stays.
TEST_P(Pack, GcRemovesWhatTheRootDoesNotReach) {
  commit(*inst_, {{0, node({1})}, {1, node({2})}, {2, node({})}, {3, node({4})}, {4, node({})}});
  const PackResult r = storage_->pack(to(kMax));
  EXPECT_EQ(r.objects_removed, 2u);
  EXPECT_EQ(r.objects_locked, 0u);
  for (const uint64_t oid : {0, 1, 2}) EXPECT_FALSE(gone(*inst_, oid)) << oid;
  for (const uint64_t oid : {3, 4}) EXPECT_TRUE(gone(*inst_, oid)) << oid;
  EXPECT_EQ(storage_->len(), 3u);
  // A second pack finds nothing more.
  EXPECT_EQ(storage_->pack(to(kMax)).objects_removed, 0u);
}

// Removing the object of the newest commit leaves the last TID where it was: TIDs and
// polls never go back (history-free: the deletion record keeps it).
TEST_P(Pack, TheLastTidStaysWhenTheNewestObjectGoes) {
  commit(*inst_, {{0, node({1})}, {1, node({})}});
  const Tid newest = create(3, node({}));
  EXPECT_EQ(storage_->pack(to(kMax)).objects_removed, 1u);
  auto fresh = reopen()->new_instance();
  fresh->sync();
  EXPECT_EQ(fresh->last_transaction(), newest);
  if (!hp()) {
    EXPECT_EQ(storage_->info().last_deletion, std::optional<Tid>(newest));
  }
  EXPECT_GT(create(4, node({})), newest);
}

// Removing older rows only leaves the history-free deletion record alone: every relstore
// process's poll would read its move as "everything changed".
TEST_P(Pack, RemovingOlderObjectsLeavesTheDeletionRecord) {
  if (hp()) GTEST_SKIP() << "history-free only: the deletion record";
  const Tid t1 = commit(*inst_, {{0, node({1})}, {1, node({})}, {3, node({})}});
  commit(*inst_, {{0, node({1, 4})}, {4, node({})}}, {{0, t1}});
  const auto before = storage_->info().last_deletion;
  EXPECT_EQ(storage_->pack(to(kMax)).objects_removed, 1u);
  EXPECT_EQ(storage_->info().last_deletion, before);
}

// The first transaction stays, empty and packed: its TID is what every relstore process's
// poll compares (a history that starts elsewhere reads as a zap).
TEST_P(Pack, TheFirstTransactionStaysWhenItEmpties) {
  RELSTORE_HP_ONLY(26, "history-free databases have no transaction rows");
  const Tid t1 = commit(*inst_, {{0, node({5})}, {5, node({})}});
  commit(*inst_, {{0, node({5}) + "2"}, {5, node({}) + "2"}}, {{0, t1}, {5, t1}});
  create(6, node({}));
  EXPECT_EQ(storage_->pack(to(kMax, false)).transactions_removed, 0u);
  auto it = inst_->iterator();
  TransactionRecord txn;
  ASSERT_TRUE(it->next(txn));
  EXPECT_EQ(txn.tid, t1);
  EXPECT_EQ(txn.status, 'p');
  EXPECT_TRUE(txn.records.empty());
}

// The JSON mirror's rows of removed objects go in the same transaction: in-commit, the
// mirror stays equal to the current objects (json-mirror.md).
TEST_P(Pack, TheMirrorLosesTheRowsOfRemovedObjects) {
  mirror_enable(uri_, MirrorMode::in_commit);
  commit(*inst_, {{0, node({1})}, {1, node({})}, {3, node({})}});
  ASSERT_EQ(mirror_status(uri_).rows, 3u);
  EXPECT_EQ(storage_->pack(to(kMax)).objects_removed, 1u);
  const MirrorStatus st = mirror_status(uri_);
  EXPECT_EQ(st.rows, 2u);
  EXPECT_EQ(st.orphaned, 0u);
}

// Removals go in batches and pruning in OID ranges: more objects than one batch, and OIDs
// far apart (one of them at 2**63 and above, a negative BIGINT in SQL), all go or stay as
// they should.
TEST_P(Pack, LargeRemovalsAndSparseOidsAreHandledWhole) {
  const uint64_t high = (uint64_t{1} << 63) + 5;
  std::map<uint64_t, std::string> data{{0, node({5, 20005, high})}, {high, node({77})}};
  for (const uint64_t oid : {uint64_t{5}, uint64_t{20005}, uint64_t{77}}) data[oid] = node({});
  for (uint64_t oid = 100000; oid < 102500; ++oid) data[oid] = node({});
  const Tid t1 = commit(*inst_, data);
  commit(*inst_, {{5, node({}) + "2"}, {20005, node({}) + "2"}, {high, node({77}) + "2"}},
         {{5, t1}, {20005, t1}, {high, t1}});
  const PackResult r = storage_->pack(to(kMax));
  EXPECT_EQ(r.objects_removed, 2500u);
  EXPECT_EQ(r.revisions_removed, hp() ? 3u : 0u);
  EXPECT_EQ(storage_->len(), 5u);
  inst_->sync();
  for (const uint64_t oid : {uint64_t{5}, uint64_t{20005}}) {
    EXPECT_EQ(inst_->load(Oid(oid)).data, node({}) + "2") << oid;
  }
  EXPECT_EQ(inst_->load(Oid(high)).data, node({77}) + "2");
  EXPECT_FALSE(gone(*inst_, 77));  // reached only through the high OID
  EXPECT_TRUE(gone(*inst_, 100000));
  EXPECT_TRUE(gone(*inst_, 102499));
}

// A record whose references cannot be read stops a GC pack before it removes anything,
// naming the oid; without GC the pack does not read references.
TEST_P(Pack, AnUnreadableRecordStopsGcBeforeAnyRemoval) {
  commit(*inst_, {{0, node({1})}, {1, "not a pickle"}, {3, node({})}});
  try {
    storage_->pack(to(kMax));
    ADD_FAILURE() << "no error";
  } catch (const StorageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("0x0000000000000001"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was removed"), std::string::npos) << what;
  }
  EXPECT_FALSE(gone(*inst_, 3));
  EXPECT_EQ(storage_->pack(to(kMax, false)).objects_removed, 0u);
}

// Without a root object, garbage collection refuses rather than remove every object.
TEST_P(Pack, WithoutARootGcRefusesAndRemovesNothing) {
  commit(*inst_, {{1, node({2})}, {2, node({})}});
  try {
    storage_->pack(to(kMax));
    ADD_FAILURE() << "no error";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("no root object"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(gone(*inst_, 1));
  EXPECT_EQ(storage_->pack(to(kMax, false)).objects_removed, 0u);
}

// Line 26: without GC unreachable objects stay.
TEST_P(Pack, WithoutGcUnreachableObjectsStay) {
  commit(*inst_, {{0, node({1})}, {1, node({})}, {3, node({})}});
  EXPECT_EQ(storage_->pack(to(kMax, false)).objects_removed, 0u);
  EXPECT_FALSE(gone(*inst_, 3));
}

// History-preserving GC looks at the pack time: an object the root reached then stays,
// even if a later commit unlinked it; a pack to after the unlinking removes it.
TEST_P(Pack, GcKeepsWhatWasReachableAtThePackTime) {
  RELSTORE_HP_ONLY(26, "a history-free database knows only the current graph");
  const Tid t1 = commit(*inst_, {{0, node({1, 2})}, {1, node({})}, {2, node({})}});
  commit(*inst_, {{0, node({1})}}, {{0, t1}});
  EXPECT_EQ(storage_->pack(to(t1)).objects_removed, 0u);
  EXPECT_FALSE(gone(*inst_, 2));
  EXPECT_EQ(storage_->pack(to(kMax)).objects_removed, 1u);
  EXPECT_TRUE(gone(*inst_, 2));
}

// Line 27: an empty storage, a pack time before the first transaction or in the future,
// and packing twice are no errors.
TEST_P(Pack, EmptyEarlyFutureAndRepeatedPacksAreHarmless) {
  EXPECT_TRUE(storage_->pack(to(kMax)).pack_tid.is_zero());
  const Tid t1 = commit(*inst_, {{0, node({1})}, {1, node({})}});
  const Tid t2 = commit(*inst_, {{1, node({}) + "2"}}, {{1, t1}});
  const PackResult early = storage_->pack(to(Tid(1)));
  EXPECT_EQ(early.objects_removed + early.revisions_removed + early.transactions_removed, 0u);
  EXPECT_EQ(storage_->pack(to(kMax)).pack_tid, t2);  // the future is the last transaction
  const PackResult again = storage_->pack(to(kMax));
  EXPECT_EQ(again.objects_removed + again.revisions_removed + again.transactions_removed, 0u);
  inst_->sync();
  EXPECT_EQ(inst_->load(Oid(1)).data, node({}) + "2");
  EXPECT_EQ(inst_->load(Oid(0)).tid, t1);
}

// Line 27: a commit between the pack's reading of the graph and its removals that links
// an unreachable object back in keeps it.
TEST_P(Pack, AnObjectLinkedWhileThePackRunsStays) {
  const Tid t1 = commit(*inst_, {{0, node({1})}, {1, node({})}, {2, node({})}});
  auto other = storage_->new_instance();
  PackOptions o = to(kMax);
  o.after_mark = [&] {
    other->sync();
    commit(*other, {{0, node({1, 2})}}, {{0, t1}});
  };
  EXPECT_EQ(storage_->pack(o).objects_removed, 0u);
  EXPECT_FALSE(gone(*inst_, 2));
  EXPECT_TRUE(verify_storage(uri_).ok());
}

// Line 27: a pack waits for a commit that voted before it locked, and keeps what that
// commit links in; the commit finishes normally.
TEST_P(Pack, WaitsForACommitBetweenVoteAndFinish) {
  const Tid t1 = commit(*inst_, {{0, node({1})}, {1, node({})}, {2, node({})}});
  auto other = storage_->new_instance();
  TransactionMetaData txn{"", "", ""};
  std::thread finisher;
  PackOptions o = to(kMax);
  o.after_mark = [&] {
    other->sync();
    other->tpc_begin(txn);
    other->store(Oid(0), t1, node({1, 2}), txn);
    other->tpc_vote(txn);
    finisher = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      other->tpc_finish(txn);
    });
  };
  const PackResult r = storage_->pack(o);
  finisher.join();
  EXPECT_EQ(r.objects_removed, 0u);
  EXPECT_FALSE(gone(*inst_, 2));
  EXPECT_EQ(inst_->load(Oid(0)).data, node({1, 2}));
}

// A database emptied while the pack runs (zap_all, as `convert --clear` does) and written
// again: the pack stops before it removes anything of what came in.
TEST_P(Pack, ADatabaseEmptiedWhileThePackRunsStopsIt) {
  commit(*inst_, {{0, node({1})}, {1, node({})}, {2, node({})}});
  auto other = reopen();
  PackOptions o = to(kMax);
  o.after_mark = [&] {
    other->zap_all();
    auto writer = other->new_instance();
    commit(*writer, {{0, node({})}, {2, node({})}, {7, node({})}});
  };
  try {
    storage_->pack(o);
    ADD_FAILURE() << "no error";
  } catch (const StorageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("emptied"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was removed"), std::string::npos) << what;
  }
  for (const uint64_t oid : {0, 2, 7}) EXPECT_FALSE(gone(*inst_, oid)) << oid;
}

// A zap's mark in the deletion record from before the pack (a database made by `convert
// --clear`) is not a zap during it, even after the pack moved the record itself.
TEST_P(Pack, AZapBeforeThePackIsNotOneDuringIt) {
  storage_->zap_all();
  commit(*inst_, {{0, node({1})}, {1, node({})}});
  std::map<uint64_t, std::string> older, newer;
  for (uint64_t i = 0; i < 1000; ++i) {
    older[200000 + i] = node({});  // removed in the second batch (higher OIDs)
    newer[100000 + i] = node({});  // in the first, holding the newest TID
  }
  commit(*inst_, older);
  commit(*inst_, newer);
  EXPECT_EQ(storage_->pack(to(kMax)).objects_removed, 2000u);
  EXPECT_EQ(storage_->len(), 2u);
}

// Two packs of one database do not run at once.
TEST_P(Pack, ASecondPackWhileOneRunsIsRefused) {
  if (GetParam().name == "sqlite") {
    GTEST_SKIP() << "SQLite's packs take turns on its write lock instead of refusing";
  }
  commit(*inst_, {{0, node({})}});
  auto second = reopen();
  PackOptions o = to(kMax);
  o.after_mark = [&] { EXPECT_THROW(second->pack(to(kMax)), StorageError); };
  storage_->pack(o);
  EXPECT_NO_THROW(second->pack(to(kMax)));
}

// Line 33: a deleted object's revisions go with the pack.
TEST_P(Pack, RemovesADeletedObject) {
  RELSTORE_HP_ONLY(33, "a history-free deletion removes the row itself");
  create(0, node({}));
  const Tid created = create(1, node({}));
  remove(1, created);
  create(2, node({}));  // the deletion is not the newest transaction
  ASSERT_EQ(inst_->history(Oid(1), 10).size(), 2u);
  EXPECT_GE(storage_->pack(to(kMax, false)).objects_removed, 1u);
  inst_->sync();
  EXPECT_THROW(inst_->history(Oid(1), 10), POSKeyError);  // as for an object never stored
  EXPECT_THROW(inst_->load_before(Oid(1), kMax), POSKeyError);
}

// Line 31.
TEST_P(Pack, ReadOnlyStorageRefusesToPack) {
  create(0, node({}));
  EXPECT_THROW(reopen("read_only=true")->pack(to(kMax)), ReadOnlyError);
}

INSTANTIATE_TEST_SUITE_P(Conformance, Pack, ::testing::ValuesIn(database_backends()), backend_name);
INSTANTIATE_TEST_SUITE_P(Conformance, PackOnFiles, ::testing::ValuesIn(file_backends()),
                         backend_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Pack);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PackOnFiles);

}  // namespace
}  // namespace relstore::conformance
