// How a vote's records reach PostgreSQL (docs/postgresql.md): up to 64 kB they stay on the
// client until the finish sends them as arrays; larger votes are copied into temp_store.
// Either way, what commits is the records as they are at the finish (conflicts resolved),
// and nothing of an earlier vote on the same connection.
#include "postgresql/pg_support.h"
#include "relstore/storage.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;

constexpr uint64_t kObjects = 20;

// One transaction storing `data` into each of `oids` at its serial; returns the TID.
Tid store_all(StorageInstance& inst, std::map<uint64_t, Tid>& serials,
              const std::vector<uint64_t>& oids, const std::string& data) {
  TransactionMetaData txn{"user", "upload", ""};
  inst.tpc_begin(txn);
  for (uint64_t oid : oids) inst.store(Oid(oid), serials[oid], data, txn);
  inst.tpc_vote(txn);
  const Tid tid = inst.tpc_finish(txn);
  for (uint64_t oid : oids) serials[oid] = tid;
  return tid;
}

std::vector<uint64_t> all_oids() {
  std::vector<uint64_t> out;
  for (uint64_t oid = 1; oid <= kObjects; ++oid) out.push_back(oid);
  return out;
}

class PostgresqlUpload : public ::testing::TestWithParam<bool> {
 protected:
  std::string query() const { return GetParam() ? "history=preserving" : "history=free"; }
};

// Large, large again (temp_store truncated first), then small votes on one connection:
// each commits its own records only, with their bytes exact.
TEST_P(PostgresqlUpload, SmallAndLargeVotesInTurnCommitTheirOwnRecordsOnly) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(GetParam() ? "upload_turns_hp" : "upload_turns_hf");
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  std::map<uint64_t, Tid> serials;
  for (uint64_t oid : all_oids()) serials[oid] = Tid(0);
  const std::string big1(5000, '\0'), big2(6000, '\x01');  // 20 of them: over 64 kB
  store_all(*inst, serials, all_oids(), big1);
  const Tid large = store_all(*inst, serials, all_oids(), big2);
  const Tid small = store_all(*inst, serials, {3}, "small");
  const Tid empty = store_all(*inst, serials, {}, "");

  auto reader = open_storage(db.uri(query()))->new_instance();
  for (uint64_t oid : all_oids()) {
    const auto r = reader->load(Oid(oid));
    EXPECT_EQ(r.data, oid == 3 ? "small" : big2) << "oid " << oid;
    EXPECT_EQ(r.tid, oid == 3 ? small : large) << "oid " << oid;
  }
  EXPECT_EQ(reader->last_transaction(), GetParam() ? empty : small);
}

// A conflict resolved during the vote: the merged state is what commits, whether the
// records went by COPY (then replaced in temp_store) or stay on the client.
TEST_P(PostgresqlUpload, AResolvedConflictCommitsTheMergedStateAtAnySize) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(GetParam() ? "upload_resolve_hp" : "upload_resolve_hf");
  auto st = open_storage(db.uri(query()));
  st->set_conflict_resolver([](const ConflictInput& in) -> std::optional<Bytes> {
    return in.committed_state + "+" + in.new_state.substr(0, 4);
  });
  auto a = st->new_instance();
  auto b = st->new_instance();
  std::map<uint64_t, Tid> serials;
  for (uint64_t oid : all_oids()) serials[oid] = Tid(0);
  for (size_t size : {size_t{100}, size_t{8000}}) {  // 20 x 8000 bytes go by COPY
    SCOPED_TRACE("state size " + std::to_string(size));
    store_all(*a, serials, all_oids(), std::string(size, 'a'));
    std::map<uint64_t, Tid> b_serials = serials;
    store_all(*b, b_serials, {1}, "b-wins");  // b commits oid 1 after a read it
    const std::string mine = "mine" + std::string(size, 'm');
    const Tid tid = store_all(*a, serials, all_oids(), mine);

    auto reader = open_storage(db.uri(query()))->new_instance();
    EXPECT_EQ(reader->load(Oid(1)).data, "b-wins+mine");
    EXPECT_EQ(reader->load(Oid(1)).tid, tid);
    EXPECT_EQ(reader->load(Oid(2)).data, mine);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PostgresqlUpload, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "hp" : "hf"; });

}  // namespace
}  // namespace relstore
