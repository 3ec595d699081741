#include "adapters/mysql/oid_allocator.h"

#include <string>

#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

// Rows pile up, one per block; every this many blocks the older ones are deleted. The
// rows deleted were committed long before (each allocation commits in its own round
// trip), so the delete waits on nobody.
constexpr int64_t kCleanupEvery = 1000;

}  // namespace

Oid OidAllocator::allocate() {
  int64_t block = 0;
  conn_.batch(
      "INSERT INTO new_oid () VALUES (); SELECT LAST_INSERT_ID(); COMMIT", 3,
      [&](Rows& r) {
        if (r.next()) block = r.int64(0);
      },
      Context::other, "allocating OIDs");
  if (block <= 0) throw SchemaError(conn_.params().describe + ": new_oid gave no block number");
  if (block % kCleanupEvery == 0) {
    try {
      conn_.batch("DELETE FROM new_oid WHERE zoid < " + std::to_string(block) + "; COMMIT", 2,
                  Context::other);
    } catch (const StorageError&) {
      rollback_quietly(conn_);  // housekeeping only: the next cleanup catches up
    }
  }
  return Oid(static_cast<uint64_t>(block) * 16);
}

void OidAllocator::set_min(Oid oid) {
  // An explicit value moves the auto-increment counter past it; if the row exists the
  // counter is past it already.
  const auto block = static_cast<int64_t>((oid.value() + 15) / 16);
  conn_.batch("INSERT IGNORE INTO new_oid (zoid) VALUES (" + std::to_string(block) + "); COMMIT", 2,
              Context::other, "moving the OID allocator");
}

void OidAllocator::reset() {
  // TRUNCATE is the only way to reset an InnoDB auto-increment counter without ALTER TABLE;
  // no load connection ever reads new_oid, so no open snapshot blocks it.
  conn_.exec("TRUNCATE TABLE new_oid", Context::other, "resetting the OID allocator");
}

}  // namespace relstore::mysql
