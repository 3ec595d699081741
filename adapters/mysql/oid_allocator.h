// OID blocks from the new_oid auto-increment table, as RelStorage allocates them on MySQL.
#pragma once

#include <utility>
#include <vector>

#include "adapters/mysql/driver.h"
#include "relstore/types.h"

namespace relstore::mysql {

// Each auto-increment value n handed out is block n, OIDs 16n-15 … 16n, as RelStorage
// reads them. Works on a store connection (autocommit off); every call commits its own
// transaction.
class OidAllocator {
 public:
  explicit OidAllocator(Connection& conn) : conn_(conn) {}
  // Takes fresh blocks in one round trip and returns their OIDs, ascending. The number of
  // blocks doubles with every call, from 1 up to 16 (256 OIDs): a busy writer asks rarely,
  // a short-lived process wastes little. Unused OIDs are simply never handed out.
  std::vector<Oid> allocate();
  // Whether an allocate() since the last call changed the session's innodb_lock_wait_timeout
  // for its cleanup: it puts it back, but a failure on the way could leave it at 1 s, so
  // the owner sets it again before it next relies on it.
  bool take_lock_wait_touched() { return std::exchange(lock_wait_touched_, false); }
  // Later blocks start above the block holding `oid`.
  void set_min(Oid oid);
  // The statement set_min sends before its COMMIT, for a bulk load to send inside its own
  // transaction: the allocator then moves exactly when the rows arrive.
  static std::string set_min_statement(Oid oid);
  // Back to block 1 (zap_all).
  void reset();

 private:
  // Every kCleanupEvery blocks, deletes old rows (one per block ever taken).
  void cleanup(int64_t first, int64_t last);

  Connection& conn_;
  int blocks_ = 1;
  bool lock_wait_touched_ = false;
};

}  // namespace relstore::mysql
