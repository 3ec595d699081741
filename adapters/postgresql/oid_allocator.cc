#include "adapters/postgresql/oid_allocator.h"

#include <string>

#include "backend/oid_blocks.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

// Under the allocator lock, shared: set_min_oid_sql's setval, which takes it exclusively,
// must not land between a concurrent nextval and the value it read, moving the sequence
// back below blocks already handed out. (The lock is taken before the first nextval: the
// materialized CTE is read before the join emits a row.)
constexpr Statement kNextBlocks = {
    "",
    "WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(1919249523, 2)) "
    "SELECT nextval('zoid_seq') FROM l, generate_series(1, $1::bigint) ORDER BY 1"};

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
  // nextval only moves the sequence forward; setval racing with another setval or with
  // a nextval could move it back, so it holds an advisory lock of relstore's own
  // exclusively (two-key form: a key space apart from RelStorage's one-key object locks),
  // which allocation takes shared (kNextBlocks). RelStorage's own allocation does not.
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
