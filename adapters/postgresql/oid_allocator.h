// OID blocks from the zoid_seq sequence, as RelStorage allocates them on PostgreSQL.
#pragma once

#include <string>
#include <vector>

#include "adapters/postgresql/driver.h"
#include "relstore/types.h"

namespace relstore::postgresql {

// The sequence's value n stands for the block of OIDs 16n-15 … 16n. nextval never hands
// the same value to two sessions and never goes back, so processes never share a block.
class OidAllocator {
 public:
  explicit OidAllocator(Conn& conn) : conn_(conn) {}
  // Takes `blocks` fresh blocks and returns their OIDs, ascending (the blocks need not be
  // adjacent when other sessions allocate at the same time). One round trip, outside any
  // transaction.
  std::vector<Oid> allocate(int blocks);
  // Later blocks start above the block holding `oid`. Its own short transaction.
  void set_min(Oid oid);

 private:
  Conn& conn_;
};

// The statements (for use inside a transaction) that move the allocator past `oid`: its
// block and every block below it are never handed out afterwards.
std::string set_min_oid_sql(Oid oid);

// Resets the allocator so that the next block is block 1 (zap).
inline constexpr const char* kResetOids = "SELECT setval('zoid_seq', 1, false)";

}  // namespace relstore::postgresql
