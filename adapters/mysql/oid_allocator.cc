#include "adapters/mysql/oid_allocator.h"

#include <algorithm>
#include <string>

#include "backend/oid_blocks.h"
#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

// Rows pile up, one per block; every this many blocks the older ones are deleted, except
// the last this many: those may still be another connection's uncommitted allocation,
// whose row lock the delete would wait for. Older ones were committed long ago (each
// allocation commits in the round trip that makes it).
constexpr int64_t kCleanupEvery = 1000;

}  // namespace

std::vector<Oid> OidAllocator::allocate() {
  // One INSERT per block, each followed by its LAST_INSERT_ID(): a multi-row INSERT need
  // not get consecutive values (innodb_autoinc_lock_mode = 2).
  std::string sql;
  for (int i = 0; i < blocks_; ++i)
    sql += "INSERT INTO new_oid () VALUES (); SELECT LAST_INSERT_ID(); ";
  sql += "COMMIT";
  std::vector<int64_t> blocks;
  conn_.batch(
      sql, 2 * blocks_ + 1,
      [&](Rows& r) {
        if (r.next()) blocks.push_back(r.int64(0));
      },
      Context::other, "allocating OIDs");
  if (blocks.size() != static_cast<size_t>(blocks_) || blocks.front() <= 0) {
    throw SchemaError(conn_.params().describe + ": new_oid gave no block numbers");
  }
  blocks_ = std::min(blocks_ * 2, 16);
  std::vector<Oid> out;
  for (int64_t block : blocks) {
    backend::append_oid_block(block, out, conn_.params().describe + ": new_oid");
  }
  cleanup(blocks.front(), blocks.back());
  return out;
}

void OidAllocator::cleanup(int64_t first, int64_t last) {
  if ((first - 1) / kCleanupEvery == last / kCleanupEvery) return;  // no multiple of it crossed
  // Waits at most a second for row locks: a RelStorage process's allocation keeps its
  // new_oid rows locked until its own commit ends, and this runs while every thread of
  // the storage waits for new_oid; the store session's own wait is the commit lock
  // timeout (30 s by default).
  lock_wait_touched_ = true;
  try {
    conn_.batch(
        "SET @relstore_lock_wait = @@SESSION.innodb_lock_wait_timeout; "
        "SET SESSION innodb_lock_wait_timeout = 1; DELETE FROM new_oid WHERE zoid < " +
            std::to_string(first - kCleanupEvery) +
            "; COMMIT; SET SESSION innodb_lock_wait_timeout = @relstore_lock_wait",
        5, Context::other);
  } catch (const StorageError&) {
    // Housekeeping only: the next cleanup catches up.
    // rollback() never throws; the lock wait is set again by the owner (take_lock_wait_touched).
    conn_.rollback();
  }
}

std::string OidAllocator::set_min_statement(Oid oid) {
  // An explicit value moves the auto-increment counter past it; if the row exists the
  // counter is past it already. Block 0 (oid 0) is below every block: nothing to move
  // (and an explicit 0 would take a new block instead).
  const auto block = static_cast<int64_t>(backend::oid_block_of(oid.value()));
  if (block == 0) return "DO 0";
  return "INSERT IGNORE INTO new_oid (zoid) VALUES (" + std::to_string(block) + ")";
}

void OidAllocator::set_min(Oid oid) {
  conn_.batch(set_min_statement(oid) + "; COMMIT", 2, Context::other, "moving the OID allocator");
}

void OidAllocator::reset() {
  // TRUNCATE is the only way to reset an InnoDB auto-increment counter without ALTER TABLE;
  // no load connection ever reads new_oid, so no open snapshot blocks it.
  conn_.exec("TRUNCATE TABLE new_oid", Context::other, "resetting the OID allocator");
}

}  // namespace relstore::mysql
