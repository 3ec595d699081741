// StorageInstance over a database adapter: MVCC snapshot and two-phase commit.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/adapter.h"
#include "relstore/pickle.h"
#include "relstore/storage.h"

namespace relstore {

class DbStorage;

class DbInstance : public StorageInstance {
 public:
  // `before`: a historical, read-only instance whose loads are as of just before it.
  DbInstance(std::shared_ptr<DbStorage> storage, std::optional<Tid> before);
  ~DbInstance() override;

  std::optional<std::vector<Oid>> poll_invalidations() override;
  void sync() override;
  void release_snapshot() override;
  void release() override;

  LoadResult load(Oid oid) override;
  std::optional<LoadBeforeResult> load_before(Oid oid, Tid tid) override;
  Bytes load_serial(Oid oid, Tid tid) override;
  std::vector<HistoryEntry> history(Oid oid, size_t size) override;
  Tid last_transaction() override;

  Oid new_oid() override;
  void tpc_begin(const TransactionMetaData& txn, std::optional<Tid> tid, char status) override;
  void store(Oid oid, std::optional<Tid> serial, const Bytes& data,
             const TransactionMetaData& txn) override;
  void restore(Oid oid, Tid serial, const std::optional<Bytes>& data,
               const TransactionMetaData& txn) override;
  void check_current_serial(Oid oid, Tid serial, const TransactionMetaData& txn) override;
  void delete_object(Oid oid, Tid serial, const TransactionMetaData& txn) override;
  std::vector<Oid> tpc_vote(const TransactionMetaData& txn) override;
  Tid tpc_finish(const TransactionMetaData& txn, const std::function<void(Tid)>& on_tid) override;
  void tpc_abort(const TransactionMetaData& txn) noexcept override;

  std::vector<UndoInfo> undo_log(int64_t first, int64_t last, const UndoFilter& filter) override;
  std::vector<Oid> undo(std::string_view id, const TransactionMetaData& txn) override;

  // db_blobs.cc
  void store_blob(Oid oid, std::optional<Tid> serial, const Bytes& data,
                  const std::string& blob_file, const TransactionMetaData& txn) override;
  void restore_blob(Oid oid, Tid serial, const Bytes& data, const std::string& blob_file,
                    const TransactionMetaData& txn) override;
  std::string load_blob(Oid oid, Tid tid) override;

  std::unique_ptr<TransactionIterator> iterator(std::optional<Tid> start,
                                                std::optional<Tid> stop) override;
  std::optional<RecordIterResult> record_iternext(std::optional<Oid> next) override;

  bool is_read_only() const override;

 private:
  enum class Phase { idle, begun, voted };

  backend::LoadConnection& load_conn();
  // Starts a snapshot if none is active; changes found on the way are kept for the next poll.
  void ensure_snapshot();
  // Begins a snapshot and folds the changes since the previous one into `pending_`.
  void restart_snapshot();
  void require_writable() const;
  // Throws StorageTransactionError unless `txn` is the transaction begun and in `phase`.
  void check_txn(const TransactionMetaData& txn, Phase phase, const char* call) const;
  void add_record(Oid oid, Tid prev, std::optional<Bytes> state);
  // Asks the resolver; returns the merged state or throws ConflictError.
  Bytes resolve(const backend::ConflictRow& c, const backend::PendingRecord& mine);
  void reset_txn() noexcept;
  // Remembers a current state of the snapshot (or of an own commit), within bounds.
  void note_known(Oid oid, Tid tid);
  // Empties the shared state cache and reads on in its new generation.
  void forget_cached_states();
  // The commit's blob files (db_blobs.cc): added, listed for the vote, dropped when the
  // object's record is replaced, moved into the blob directory by finish or removed.
  std::vector<backend::PendingBlob> pending_blobs() const;
  void drop_blob(Oid oid) noexcept;
  void publish_blobs(Tid tid) noexcept;
  void discard_blobs() noexcept;
  class OwningIterator;

  std::shared_ptr<DbStorage> owner_;
  DbStorage& storage_;
  std::optional<Tid> before_;
  std::unique_ptr<backend::LoadConnection> load_;

  // --- snapshot ---
  bool in_snapshot_ = false;
  bool had_snapshot_ = false;
  Tid snapshot_tid_;
  Tid last_own_commit_;
  std::optional<Tid> first_own_commit_;  // this instance's first commit before any snapshot
  std::unordered_map<Oid, Tid> known_;   // oid -> current tid, valid for this snapshot
  std::unordered_set<Tid> own_commits_;  // this instance's commits not yet polled past
  Tid newest_own_write_;                 // the newest of them (0 when none)
  uint64_t cache_generation_ = 0;        // the state cache's generation at the snapshot
  uint64_t snapshot_serial_ = 0;         // counts snapshots begun, for iter_ahead_
  // record_iternext reads a page of current records and serves the calls that walk on
  // through it: (serial of the snapshot read in, the records after the last returned).
  uint64_t iter_serial_ = 0;
  std::deque<std::pair<Oid, backend::StateRow>> iter_ahead_;
  std::unordered_set<Oid> pending_;  // invalidations found before the next poll
  bool pending_everything_ = false;

  // --- two-phase commit ---
  const TransactionMetaData* txn_ = nullptr;
  Phase phase_ = Phase::idle;
  std::optional<Tid> forced_tid_;
  char status_ = ' ';
  std::vector<backend::PendingRecord> records_;
  std::unordered_map<Oid, size_t> record_index_;
  std::vector<backend::ReadCurrent> read_current_;
  std::map<Oid, std::string> blobs_;  // oid -> its blob file under the blob directory
  std::unique_ptr<backend::StoreConnection> store_;
  bool restoring_ = false;
  std::unique_ptr<RecordDecoder> decoder_;  // for in-commit JSON mirror rows
  bool released_ = false;
};

}  // namespace relstore
