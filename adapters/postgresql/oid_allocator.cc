#include "adapters/postgresql/oid_allocator.h"

#include <string>

#include "backend/oid_blocks.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

constexpr Statement kNextBlocks = {
    "", "SELECT nextval('zoid_seq') FROM generate_series(1, $1::bigint) ORDER BY 1"};

}  // namespace

std::vector<Oid> OidAllocator::allocate(int blocks) {
  const Result r = conn_.run(kNextBlocks, Params().int64(blocks), Context::other);
  std::vector<Oid> out;
  out.reserve(static_cast<size_t>(r.rows()) * 16);
  for (int i = 0; i < r.rows(); ++i) {
    const int64_t block = r.int64(i, 0);
    if (block <= 0) {
      throw SchemaError(conn_.describe() + ": zoid_seq returned " + std::to_string(block) +
                        "; the sequence is damaged");
    }
    backend::append_oid_block(block, out, conn_.describe() + ": zoid_seq");
  }
  return out;
}

std::string set_min_oid_sql(Oid oid) {
  const auto block = static_cast<int64_t>(backend::oid_block_of(oid.value()));
  // nextval only moves the sequence forward; two setval calls racing could move it back,
  // so they take turns under an advisory lock of relstore's own (two-key form: a key
  // space apart from RelStorage's one-key object locks).
  const std::string n = std::to_string(block);
  return "SELECT pg_advisory_xact_lock(1919249523, 2); SELECT setval('zoid_seq', " + n +
         ") FROM zoid_seq WHERE " + n +
         " > CASE WHEN is_called THEN last_value ELSE last_value - 1 END";
}

void OidAllocator::set_min(Oid oid) {
  try {
    conn_.simple("BEGIN; " + set_min_oid_sql(oid) + "; COMMIT", Context::other);
  } catch (...) {
    conn_.rollback_quietly();
    throw;
  }
}

}  // namespace relstore::postgresql
