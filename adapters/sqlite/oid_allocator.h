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
  // Takes kBlocks fresh blocks in one write (each costs an fsync of the journal) and
  // returns their OIDs, ascending.
  std::vector<Oid> allocate();
  static constexpr int kBlocks = 8;
  // Later blocks start above the block holding `oid`.
  void set_min(Oid oid);
  void reset();

 private:
  std::unique_ptr<Db> db_;
};

}  // namespace relstore::sqlite
