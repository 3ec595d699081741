// One thread's view of a FileStorage: a snapshot for reads and a two-phase commit.
#pragma once

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "filestorage/file_storage.h"

namespace relstore::fs {

class FileInstance : public StorageInstance {
 public:
  // `before`: a historical, read-only instance whose loads are as of just before it.
  // `read_only`: refuse writes even when the storage is writable.
  // `clock`: where TIDs of commits without one come from; null = the storage's clock.
  FileInstance(std::shared_ptr<FileStorage> storage, std::optional<Tid> before, bool read_only,
               std::shared_ptr<Clock> clock);
  ~FileInstance() override;

  std::optional<std::vector<Oid>> poll_invalidations() override;
  void sync() override;
  void release_snapshot() override { sync(); }
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

  // relstore undoes in databases; a Data.fs is undone by ZODB's FileStorage.
  std::vector<UndoInfo> undo_log(int64_t first, int64_t last, const UndoFilter& filter) override;
  std::vector<Oid> undo(std::string_view id, const TransactionMetaData& txn) override;

  std::unique_ptr<TransactionIterator> iterator(std::optional<Tid> start,
                                                std::optional<Tid> stop) override;
  std::optional<RecordIterResult> record_iternext(std::optional<Oid> next) override;

  bool is_read_only() const override;

 private:
  enum class Phase { idle, begun, voted };

  Tid snapshot();
  // Reads see revisions with a TID below this: the snapshot's, or a historical instance's.
  Tid visible_before();
  void require_writable() const;
  void check_txn(const TransactionMetaData& txn, Phase phase, const char* call) const;
  // The serial checks recorded by store, delete_object and check_current_serial, run at
  // vote like the database backends do (the commit lock makes them final there).
  void check_serials();
  void add_record(Oid oid, std::optional<Bytes> data);
  Bytes resolve_conflict(Oid oid, Tid given, Tid committed, const Bytes& mine);
  void reset_txn() noexcept;

  std::shared_ptr<FileStorage> owner_;
  FileStorage& storage_;
  std::optional<Tid> before_;
  bool read_only_;
  std::shared_ptr<Clock> clock_;

  // --- snapshot ---
  bool in_snapshot_ = false;
  bool polled_ = false;  // a poll has set the base for the next one
  Tid snapshot_tid_;
  Tid poll_base_;  // changes after this are reported by the next poll
  uint64_t generation_ = 0;
  std::unordered_set<Tid> own_commits_;
  Tid last_own_commit_;
  uint64_t own_generation_ = 0;  // the storage's generation when they were made

  // --- commit ---
  const TransactionMetaData* txn_ = nullptr;
  Phase phase_ = Phase::idle;
  std::optional<Tid> forced_tid_;
  Tid tid_;
  char status_ = ' ';
  std::vector<PendingRecord> records_;
  std::optional<FileStorage::Staged> staged_;  // written at vote, published at finish
  std::unordered_map<Oid, size_t> record_index_;
  std::vector<Oid> resolved_;
  enum class Check { store, remove, read_current };
  struct SerialCheck {
    Oid oid;
    Tid serial;
    Check kind;
  };
  std::vector<SerialCheck> checks_;
  std::unordered_set<Oid> write_checked_;  // objects with a store or remove check
  void add_write_check(const SerialCheck& check);
};

}  // namespace relstore::fs
