// RelStorage's OID allocators hand out blocks of 16: block b holds OIDs 16b-15 … 16b. The
// last block with any OID that fits 64 bits is 2**60, and it holds only 15 (2**64 itself
// does not fit); arithmetic past it would wrap to OIDs that are in use, so it stops there
// with an error instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "relstore/errors.h"
#include "relstore/types.h"

namespace relstore::backend {

constexpr uint64_t kLastOidBlock = uint64_t{1} << 60;

// The block holding `oid` (block 0 for OID 0), without overflow near 2**64.
constexpr uint64_t oid_block_of(uint64_t oid) { return oid / 16 + (oid % 16 != 0); }

// Appends the OIDs of `block` (>= 1: callers report a damaged allocator below that);
// `where` names the allocator in the error.
inline void append_oid_block(int64_t block, std::vector<Oid>& out, const std::string& where) {
  if (static_cast<uint64_t>(block) > kLastOidBlock) {
    throw StorageError(where + ": no OIDs left to hand out (the allocator is at block " +
                       std::to_string(block) + "; the largest OID, 2**64-1, is in block 2**60)");
  }
  const uint64_t first = (static_cast<uint64_t>(block) - 1) * 16 + 1;
  for (uint64_t i = 0; i < 16; ++i) {
    const uint64_t oid = first + i;
    if (oid < first) break;  // wrapped past 2**64-1: the last block ends early
    out.emplace_back(oid);
  }
}

}  // namespace relstore::backend
