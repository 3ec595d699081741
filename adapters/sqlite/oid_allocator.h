// OID blocks from oids.sqlite3, RelStorage's separate allocator file.
#pragma once

#include <memory>
#include <vector>

#include "adapters/sqlite/adapter.h"

namespace relstore::sqlite {

// The file holds one row with the last block number handed out; block n is OIDs
// 16n-15 … 16n. Each allocation is its own write transaction, so processes never share
// a block.
class OidAllocator {
 public:
  explicit OidAllocator(const Location& loc);
  void ensure_schema();
  // Takes fresh blocks in one write and returns their OIDs, ascending. Each write costs
  // fsyncs of the journal, so the number of blocks doubles with every call on this
  // allocator, from 8 up to 128 (2048 OIDs): a busy writer pays rarely, a short-lived
  // process wastes little. Unused OIDs are simply never handed out.
  std::vector<Oid> allocate();
  // Later blocks start above the block holding `oid`.
  void set_min(Oid oid);
  void reset();

 private:
  std::unique_ptr<Db> db_;
  int64_t blocks_ = 8;
};

}  // namespace relstore::sqlite
