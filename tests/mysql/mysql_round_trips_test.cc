// Server round trips per transaction (design.md §4 targets), counted by the adapter.
#include <gtest/gtest.h>

#include "mysql/support.h"
#include "relstore/storage.h"

namespace relstore::mysql::testing {
namespace {

using MysqlRoundTrips = MysqlServerTest;

constexpr int kObjects = 20;

TEST_F(MysqlRoundTrips, ATwentyObjectWriteTransactionTakesAtMostFour) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    auto st = open_storage(fresh_database("trips", hp ? "?history=preserving" : "?history=free"));
    auto inst = st->new_instance();
    std::vector<Oid> oids;
    for (int i = 0; i < kObjects; ++i) oids.push_back(inst->new_oid());
    std::vector<Tid> serials(kObjects);
    for (int round = 0; round < 3; ++round) {
      inst->poll_invalidations();
      const uint64_t before = st->stats().round_trips;
      TransactionMetaData txn{"user", "twenty objects", ""};
      inst->tpc_begin(txn);
      for (int i = 0; i < kObjects; ++i) {
        inst->store(oids[i], serials[i], "state " + std::to_string(round), txn);
      }
      inst->tpc_vote(txn);
      const Tid tid = inst->tpc_finish(txn);
      const uint64_t trips = st->stats().round_trips - before;
      // Round 0 creates the objects, rounds 1 and 2 update them.
      EXPECT_LE(trips, 4u) << "round " << round;
      std::printf("[ trips    ] %s, 20-object write, round %d: %llu\n", hp ? "hp" : "hf", round,
                  static_cast<unsigned long long>(trips));
      for (auto& s : serials) s = tid;
    }
  }
}

TEST_F(MysqlRoundTrips, AReadOnlyTransactionWhosePollFindsNothingTakesAtMostOne) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    auto st = open_storage(fresh_database("trips", hp ? "?history=preserving" : "?history=free"));
    auto inst = st->new_instance();
    commit_one(*inst, Oid(1), std::nullopt, "cached");
    inst->poll_invalidations();
    inst->load(Oid(1));
    inst->release_snapshot();
    for (int round = 0; round < 5; ++round) {
      // As ZODB runs one: poll at the start, reads served by the cache, end of snapshot.
      const uint64_t before = st->stats().round_trips;
      const auto changed = inst->poll_invalidations();
      ASSERT_TRUE(changed);
      EXPECT_TRUE(changed->empty());
      EXPECT_EQ(inst->load(Oid(1)).data, "cached");
      inst->release_snapshot();
      const uint64_t trips = st->stats().round_trips - before;
      EXPECT_LE(trips, 1u) << "round " << round;
      std::printf("[ trips    ] %s, read-only, round %d: %llu\n", hp ? "hp" : "hf", round,
                  static_cast<unsigned long long>(trips));
    }
  }
}

}  // namespace
}  // namespace relstore::mysql::testing
