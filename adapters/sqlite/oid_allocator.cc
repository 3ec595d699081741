#include "adapters/sqlite/oid_allocator.h"

#include <algorithm>

#include "backend/oid_blocks.h"
#include "embedded_sql.h"
#include "relstore/errors.h"

namespace relstore::sqlite {
namespace {

// Runs `body` inside BEGIN IMMEDIATE … COMMIT, rolling back on failure.
template <class F>
auto in_write_txn(Db& db, F&& body) {
  db.exec("BEGIN IMMEDIATE");
  try {
    auto result = body();
    db.exec("COMMIT");
    return result;
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
}

}  // namespace

OidAllocator::OidAllocator(const Location& loc)
    : db_(std::make_unique<Db>(loc.oids_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) {
  db_->set_busy_timeout(loc.lock_timeout);
  // A rollback journal, not RelStorage's journal_mode=off: a crash must never let the
  // counter go back and hand out OIDs twice.
  db_->exec("PRAGMA journal_mode = PERSIST");
  db_->exec("PRAGMA synchronous = NORMAL");
}

void OidAllocator::ensure_schema() {
  in_write_txn(*db_, [&] {
    db_->exec(embedded_sql("sql/sqlite/oids.sql"));
    // The marker table says the row has the meaning RelStorage gives it. Without it, a
    // row is either RelStorage's (the next block) or relstore's of before (the last block
    // handed out): moving it on by one is right for the second, and only skips a block
    // of the first.
    if (!db_->has_table("relstore_oid_next_block")) {
      if (db_->query_int("SELECT COUNT(*) FROM new_oid") == 0) {
        db_->exec("INSERT INTO new_oid (zoid) VALUES (1)");
      } else {
        db_->exec("UPDATE new_oid SET zoid = zoid + 1");
      }
      db_->exec("CREATE TABLE relstore_oid_next_block (id INTEGER PRIMARY KEY NOT NULL)");
    }
    return 0;
  });
}

std::vector<Oid> OidAllocator::allocate() {
  // The row is the next block to hand out, as RelStorage reads it (RelStorage takes one
  // block at a time; we take several): blocks next … next + blocks - 1.
  const int64_t blocks = blocks_;
  const int64_t after = in_write_txn(*db_, [&] {
    Stmt& s = db_->prepared("UPDATE new_oid SET zoid = zoid + ? RETURNING zoid");
    StmtScope scope(s);
    s.bind(1, blocks);
    return s.step() ? s.int64(0) : int64_t{-1};
  });
  if (after - blocks < 1) {
    throw SchemaError(db_->path() + ": the new_oid table is empty or damaged");
  }
  blocks_ = std::min<int64_t>(blocks_ * 2, 128);
  std::vector<Oid> out;
  for (int64_t block = after - blocks; block < after; ++block) {
    backend::append_oid_block(block, out, db_->path() + ": new_oid");
  }
  return out;
}

void OidAllocator::set_min(Oid oid) {
  // The next block must be past the one holding `oid`.
  const uint64_t v = oid.value();
  const auto block = static_cast<int64_t>(backend::oid_block_of(v)) + 1;
  in_write_txn(*db_, [&] {
    Stmt& s = db_->prepared("UPDATE new_oid SET zoid = ?1 WHERE zoid < ?1");
    s.bind(1, block);
    s.run();
    return 0;
  });
}

void OidAllocator::reset() {
  in_write_txn(*db_, [&] {
    db_->exec("UPDATE new_oid SET zoid = 1");
    return 0;
  });
}

}  // namespace relstore::sqlite
