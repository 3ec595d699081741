// Two-phase commit on SQLite: temp_store upload, checks and the move under the write lock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "adapters/sqlite/adapter.h"
#include "adapters/sqlite/oid_allocator.h"
#include "adapters/sqlite/queries.h"

namespace relstore::sqlite {

// The chunk sizes a blob of `size` bytes is stored in: one chunk, unless it is larger than
// what a row may hold under SQLite's length limit `value_limit` (1 GB by default); then
// chunks of that much, in order (readers, RelStorage's too, join a blob's chunks by
// chunk_num). An empty blob is one empty chunk.
std::vector<uint64_t> blob_chunk_sizes(uint64_t size, uint64_t value_limit);

// SQLite has one writer at a time, so the database write lock taken at vote (BEGIN
// IMMEDIATE) is the commit lock and every object lock at once: conflict checks and
// readCurrent checks under it see the newest data, and nobody can change an object
// between vote and finish.
class SqliteStoreConnection : public backend::StoreConnection {
 public:
  SqliteStoreConnection(const Location& loc, backend::Adapter& adapter);
  ~SqliteStoreConnection() override;

  std::vector<backend::ConflictRow> vote(const backend::VoteRequest& req) override;
  void replace(std::span<const backend::PendingRecord> records) override;
  Tid finish(const backend::FinishRequest& req) override;
  void rollback() noexcept override;
  std::vector<Oid> allocate_oids() override;
  void set_min_oid(Oid oid) override;
  std::optional<bool> mirror_in_commit() const override { return mirror_in_commit_; }

 private:
  void upload(std::span<const backend::PendingRecord> records);
  // Inserts the vote's blobs into blob_chunk with the commit's TID (after the move).
  void write_blobs(Tid tid);
  void check_read_current(std::span<const backend::ReadCurrent> read_current);
  void move(Tid tid);
  Tid last_finished_tid();  // under the write lock
  OidAllocator& oids();

  const Location& loc_;
  const std::string describe_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<OidAllocator> oids_;
  const Queries& q_;
  size_t record_count_ = 0;
  std::vector<backend::PendingBlob> blobs_;  // the vote's, written by finish
  bool has_deletion_mark_ = false;           // history-free database with relstore_hf_deletion
  bool mirror_in_commit_ = false;
};

}  // namespace relstore::sqlite
