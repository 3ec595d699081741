// How a vote's records reach PostgreSQL (docs/postgresql.md): up to 64 kB they stay on the
// client until the finish sends them as arrays; larger votes are copied into temp_store.
// Either way, what commits is the records as they are at the finish (conflicts resolved),
// and nothing of an earlier vote on the same connection.
#include "postgresql/pg_support.h"
#include "relstore/storage.h"

namespace relstore {
namespace {

using pgtest::store_all;
using pgtest::TestDatabase;
using pgtest::update_all;

constexpr uint64_t kObjects = 20;

class PostgresqlUpload : public pgtest::ModeTest {};

// Large, large again (temp_store truncated first), then small votes on one connection:
// each commits its own records only, with their bytes exact.
TEST_P(PostgresqlUpload, SmallAndLargeVotesInTurnCommitTheirOwnRecordsOnly) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("upload_turns"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  pgtest::Serials serials = pgtest::new_objects(kObjects);
  const std::string big1(5000, '\0'), big2(6000, '\x01');  // 20 of them: over 64 kB
  update_all(*inst, serials, big1);
  const Tid large = update_all(*inst, serials, big2);
  const Tid small = store_all(*inst, serials, {3}, "small");
  const Tid empty = store_all(*inst, serials, {}, "");

  auto reader = open_storage(db.uri(query()))->new_instance();
  for (uint64_t oid = 1; oid <= kObjects; ++oid) {
    const auto r = reader->load(Oid(oid));
    EXPECT_EQ(r.data, oid == 3 ? "small" : big2) << "oid " << oid;
    EXPECT_EQ(r.tid, oid == 3 ? small : large) << "oid " << oid;
  }
  EXPECT_EQ(reader->last_transaction(), hp() ? empty : small);
}

// A conflict resolved during the vote: the merged state is what commits, whether the
// records went by COPY (then replaced in temp_store) or stay on the client.
TEST_P(PostgresqlUpload, AResolvedConflictCommitsTheMergedStateAtAnySize) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db(db_name("upload_resolve"));
  auto st = open_storage(db.uri(query()));
  st->set_conflict_resolver([](const ConflictInput& in) -> std::optional<Bytes> {
    return in.committed_state + "+" + in.new_state.substr(0, 4);
  });
  auto a = st->new_instance();
  auto b = st->new_instance();
  pgtest::Serials serials = pgtest::new_objects(kObjects);
  for (size_t size : {size_t{100}, size_t{8000}}) {  // 20 x 8000 bytes go by COPY
    SCOPED_TRACE("state size " + std::to_string(size));
    update_all(*a, serials, std::string(size, 'a'));
    pgtest::Serials b_serials = serials;
    store_all(*b, b_serials, {1}, "b-wins");  // b commits oid 1 after a read it
    const std::string mine = "mine" + std::string(size, 'm');
    const Tid tid = update_all(*a, serials, mine);

    auto reader = open_storage(db.uri(query()))->new_instance();
    EXPECT_EQ(reader->load(Oid(1)).data, "b-wins+mine");
    EXPECT_EQ(reader->load(Oid(1)).tid, tid);
    EXPECT_EQ(reader->load(Oid(2)).data, mine);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PostgresqlUpload, ::testing::Bool(), pgtest::mode_name);

}  // namespace
}  // namespace relstore
