// Pack beside another committer that takes only RelStorage's locks, and RelStorage's
// pack lock (docs/operations.md, "Packing").
#include <gtest/gtest.h>

#include <limits>

#include "mysql/support.h"
#include "relstore/errors.h"
#include "support/commits.h"

namespace relstore::mysql::testing {
namespace {

using relstore::testing::mapping_of;
using MysqlPack = MysqlServerTest;

PackOptions now() {
  PackOptions o;
  o.pack_tid = Tid(std::numeric_limits<uint64_t>::max());
  return o;
}

// An unreachable object whose row a committing RelStorage process holds locked is kept
// and reported; the next pack removes it.
TEST_F(MysqlPack, ARowAnotherCommitterHoldsIsKeptUntilTheNextPack) {
  for (const bool hp : {false, true}) {
    SCOPED_TRACE(hp ? "history-preserving" : "history-free");
    const std::string uri =
        fresh_database("pack_locked", hp ? "?history=preserving" : "?history=free");
    auto st = open_storage(uri);
    commit_states(*st->new_instance(),
                  {{Oid(0), mapping_of({1})}, {Oid(1), mapping_of({})}, {Oid(3), mapping_of({})}});
    auto other = connect(db_of(uri));
    other->exec("START TRANSACTION");
    scalar(*other, std::string("SELECT zoid FROM ") + (hp ? "current_object" : "object_state") +
                       " WHERE zoid = 3 FOR UPDATE");
    const PackResult locked = st->pack(now());
    EXPECT_EQ(locked.objects_removed, 0u);
    EXPECT_EQ(locked.objects_locked, 1u);
    other->exec("ROLLBACK");
    const PackResult after = st->pack(now());
    EXPECT_EQ(after.objects_removed, 1u);
    EXPECT_EQ(after.objects_locked, 0u);
  }
}

// RelStorage's pack lock held elsewhere refuses the pack before it changes anything.
TEST_F(MysqlPack, RelStoragesPackLockHeldElsewhereRefusesThePack) {
  const std::string uri = fresh_database("pack_lock", "?history=free");
  auto st = open_storage(uri);
  auto other = connect(db_of(uri));
  ASSERT_EQ(scalar(*other, "SELECT GET_LOCK(CONCAT(DATABASE(), '.pack'), 0)"), "1");
  try {
    st->pack(now());
    ADD_FAILURE() << "no error";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("another pack"), std::string::npos) << e.what();
  }
  scalar(*other, "SELECT RELEASE_LOCK(CONCAT(DATABASE(), '.pack'))");
  EXPECT_NO_THROW(st->pack(now()));
}

// Without the JSON mirror's lock (a database before that migration), relstore's commits
// between vote and finish cannot be kept out: garbage collection refuses, changing
// nothing; a pack without it runs.
TEST_F(MysqlPack, WithoutTheMirrorLockGcRefuses) {
  const std::string uri = fresh_database("pack_nolock", "?history=free");
  auto st = open_storage(uri);
  commit_states(*st->new_instance(), {{Oid(0), mapping_of({})}, {Oid(3), mapping_of({})}});
  connect(db_of(uri))->exec("DROP TABLE relstore_json_mirror_lock");
  auto reopened = open_storage(uri);
  try {
    reopened->pack(now());
    ADD_FAILURE() << "no error";
  } catch (const StorageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("migrate up"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was removed"), std::string::npos) << what;
  }
  PackOptions no_gc = now();
  no_gc.gc = false;
  EXPECT_NO_THROW(reopened->pack(no_gc));
  auto inst = reopened->new_instance();
  EXPECT_NO_THROW(inst->load(Oid(3)));
}

}  // namespace
}  // namespace relstore::mysql::testing
