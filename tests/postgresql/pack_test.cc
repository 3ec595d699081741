// Pack beside another committer that takes only RelStorage's locks, and RelStorage's
// pack lock (docs/operations.md, "Packing").
#include <gtest/gtest.h>

#include <limits>

#include "postgresql/pg_support.h"
#include "relstore/errors.h"
#include "support/commits.h"

namespace relstore {
namespace {

using testing::mapping_of;

class PostgresqlPack : public pgtest::ModeTest {};

PackOptions now() {
  PackOptions o;
  o.pack_tid = Tid(std::numeric_limits<uint64_t>::max());
  return o;
}

// An unreachable object whose row a committing RelStorage process holds locked is kept
// and reported; the next pack removes it.
TEST_P(PostgresqlPack, ARowAnotherCommitterHoldsIsKeptUntilTheNextPack) {
  RELSTORE_NEED_POSTGRESQL();
  pgtest::TestDatabase db(db_name("pack_locked"));
  auto st = open_storage(db.uri(query()));
  auto inst = st->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(0), std::nullopt, mapping_of({1}), txn);
  inst->store(Oid(1), std::nullopt, mapping_of({}), txn);
  inst->store(Oid(3), std::nullopt, mapping_of({}), txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  auto other = db.connect();
  other->simple(std::string("BEGIN; SELECT zoid FROM ") +
                    (hp() ? "current_object" : "object_state") + " WHERE zoid = 3 FOR UPDATE",
                postgresql::Context::other);
  const PackResult locked = st->pack(now());
  EXPECT_EQ(locked.objects_removed, 0u);
  EXPECT_EQ(locked.objects_locked, 1u);
  other->simple("ROLLBACK", postgresql::Context::other);
  const PackResult after = st->pack(now());
  EXPECT_EQ(after.objects_removed, 1u);
  EXPECT_EQ(after.objects_locked, 0u);
}

// RelStorage's pack lock held elsewhere refuses the pack before it changes anything:
// -1, which RelStorage's pack and undo take, and -2, which design.md names.
TEST_P(PostgresqlPack, RelStoragesPackLockHeldElsewhereRefusesThePack) {
  RELSTORE_NEED_POSTGRESQL();
  pgtest::TestDatabase db(db_name("pack_lock"));
  auto st = open_storage(db.uri(query()));
  auto other = db.connect();
  for (const char* key : {"-1", "-2"}) {
    SCOPED_TRACE(key);
    other->simple(std::string("SELECT pg_advisory_lock(") + key + ")", postgresql::Context::other);
    try {
      st->pack(now());
      ADD_FAILURE() << "no error";
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("another pack"), std::string::npos) << e.what();
    }
    other->simple(std::string("SELECT pg_advisory_unlock(") + key + ")",
                  postgresql::Context::other);
  }
  EXPECT_NO_THROW(st->pack(now()));
  EXPECT_NO_THROW(st->pack(now()));  // the first let go of both
}

INSTANTIATE_TEST_SUITE_P(Modes, PostgresqlPack, ::testing::Bool(), pgtest::mode_name);

}  // namespace
}  // namespace relstore
