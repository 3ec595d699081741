// Two-phase commit on MySQL: multi-row upload into temp_store and the lock-and-detect
// procedure at vote (one round trip), the finish procedure at finish (one round trip).
#pragma once

#include <memory>

#include "adapters/mysql/adapter.h"
#include "adapters/mysql/oid_allocator.h"

namespace relstore::mysql {

// Row locks taken at vote (readCurrent shared, written objects exclusive) keep others
// from changing those objects until finish; finish takes the commit lock only while it
// chooses the TID and moves the rows, so commits of disjoint objects overlap.
class MysqlStoreConnection : public backend::StoreConnection {
 public:
  MysqlStoreConnection(const Settings& settings, backend::Adapter& adapter);
  ~MysqlStoreConnection() override;

  std::vector<backend::ConflictRow> vote(const backend::VoteRequest& req) override;
  void replace(std::span<const backend::PendingRecord> records) override;
  Tid finish(const backend::FinishRequest& req) override;
  void rollback() noexcept override;
  std::vector<Oid> allocate_oids() override;
  void set_min_oid(Oid oid) override;
  bool healthy() const override { return conn_->healthy(); }
  std::optional<bool> mirror_in_commit() const override { return mirror_in_commit_; }

  // Bulk loading of a history-free database (convert): upserts the records with their own
  // TIDs and deletes absent ones in one transaction, then moves the OID allocator past
  // them.
  // `expected_last`: Adapter::bulk_apply_current.
  void apply_current(std::span<const backend::BulkRecord> records,
                     std::optional<Tid> expected_last);
  // Before the first apply_current: takes the bulk-load lock for the life of this
  // connection (take_bulk_lock in bulk_loader.h).
  void hold_bulk_lock();

 private:
  // Uploads the vote's blobs into temp_blob_chunk.
  void upload_blobs(std::span<const backend::PendingBlob> blobs);
  void read_missing_committed_states(std::vector<backend::ConflictRow>& out);
  std::vector<backend::ConflictRow> try_vote(const backend::VoteRequest& req);
  // A vote creating the root (OID 0, which no allocator hands out) first takes a named
  // lock of the database, held until the transaction ends: two processes opening an empty
  // database at once (ZODB's DB()) would otherwise both create it, the row locks having
  // no row to lock yet, and the second commit would overwrite the first. One more round
  // trip, once in a database's life.
  void lock_root_creation(double timeout);
  void release_root_lock() noexcept;
  // Runs `step`; when the connection turns out lost (a pooled one the server closed:
  // a restart, wait_timeout, KILL), whatever the session did died with it, so it runs
  // once more on a new connection.
  template <class F>
  auto once_more_if_lost(F&& step);

  const Settings& settings_;
  backend::Adapter& adapter_;
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<OidAllocator> oids_;
  int lock_wait_seconds_;
  bool has_deletes_ = false;      // the voted records include a deletion (history-free finish)
  bool holds_root_lock_ = false;  // this transaction creates the root (lock_root_creation)
  std::optional<bool> mirror_in_commit_;  // the JSON mirror's mode as the last vote read it
};

}  // namespace relstore::mysql
