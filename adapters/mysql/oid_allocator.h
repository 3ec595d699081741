// OID blocks from the new_oid auto-increment table, as RelStorage allocates them on MySQL.
#pragma once

#include "adapters/mysql/driver.h"
#include "relstore/types.h"

namespace relstore::mysql {

// Each auto-increment value n handed out is block n, OIDs 16n-15 … 16n. Works on a store
// connection (autocommit off); every call commits its own transaction.
class OidAllocator {
 public:
  explicit OidAllocator(Connection& conn) : conn_(conn) {}
  // Returns the highest OID of a fresh block.
  Oid allocate();
  // Later blocks start above the block holding `oid`.
  void set_min(Oid oid);
  // Back to block 1 (zap_all).
  void reset();

 private:
  Connection& conn_;
};

}  // namespace relstore::mysql
