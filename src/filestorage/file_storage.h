// A Data.fs as a relstore Storage: an oid index built by one forward scan, reads through
// the mapping, and (writable) restore-mode and store-mode commits appended to the file.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "filestorage/file_map.h"
#include "filestorage/format.h"
#include "filestorage/oid_index.h"
#include "filestorage/scanner.h"
#include "filestorage/writer.h"
#include "paths.h"
#include "relstore/filestorage.h"

namespace relstore::fs {

// Instances share ownership (as DbStorage's do), so an instance outlives the handle
// open_file_storage returns; the file is closed and unlocked when the last one goes.
class FileStorage : public Storage, public std::enable_shared_from_this<FileStorage> {
 public:
  FileStorage(std::string path, FileStorageOptions options);
  ~FileStorage() override;

  std::unique_ptr<StorageInstance> new_instance() override { return new_instance(false, nullptr); }
  // For handles that share one writer: `read_only` refuses writes; `clock` (null: the
  // storage's) gives the TIDs of this instance's commits.
  std::unique_ptr<StorageInstance> new_instance(bool read_only, std::shared_ptr<Clock> clock);
  std::unique_ptr<StorageInstance> historical_instance(Tid before) override;
  void set_conflict_resolver(ConflictResolver resolver) override;

  std::string name() const override { return path_; }
  std::string sort_key() const override { return path_; }
  std::string identity() override { return path_identity("file", path_); }
  bool is_read_only() const override { return options_.read_only; }
  bool keep_history() const override { return true; }
  uint64_t len() override;
  uint64_t size() override;
  StorageInfo info() override;
  StorageStats stats() const override;
  void zap_all() override;
  bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) override;
  void close() override;
  bool closed() const;

  // --- reads, for instances (each takes the shared lock) ---
  struct Revision {
    DataHeader rec;
    std::optional<Tid> end;  // tid of the next revision; none if current
  };
  // The newest committed TID (not counting 'u' transactions), zero when empty.
  Tid last_tid() const;
  // Bumped by zap_all, so instances know their invalidation bookkeeping is void.
  uint64_t generation() const;
  // The newest revision with tid < `before` (the newest of all when none); none when the
  // object only has later ones. Throws POSKeyError for an unknown oid.
  std::optional<Revision> revision_before(Oid oid, std::optional<Tid> before) const;
  // Revision `tid` of `oid`; none if there is no such revision.
  std::optional<DataHeader> revision_at(Oid oid, Tid tid) const;
  // The data of a revision (back pointers followed); none when absent.
  std::optional<Bytes> data_of(const DataHeader& rec) const;
  // Revisions with tid < `before` (all when none), newest first; POSKeyError when none.
  std::vector<HistoryEntry> history(Oid oid, size_t size, std::optional<Tid> before) const;
  std::unique_ptr<TransactionIterator> iterator(std::optional<Tid> start,
                                                std::optional<Tid> stop) const;
  // The current records in oid order, as of just before `before` (now when none).
  std::optional<RecordIterResult> record_iternext(std::optional<Oid> next,
                                                  std::optional<Tid> before) const;
  // Serial of the newest revision of `oid` (even a deletion), none for an unknown oid.
  std::optional<Tid> current_serial(Oid oid) const;
  // OIDs committed after `since` except by transactions in `own`; none when the log no
  // longer reaches back that far.
  std::optional<std::vector<Oid>> changes_since(Tid since,
                                                const std::unordered_set<Tid>& own) const;
  ConflictResolver resolver() const;

  // --- writes, for instances ---
  Oid new_oid();
  // The commit lock, held from tpc_begin to tpc_finish/tpc_abort: one writer at a time, as
  // in ZODB's FileStorage. Throws UnableToAcquireCommitLockError after the timeout.
  void lock_commit();
  void unlock_commit() noexcept;
  // The greatest TID in the file, 'u' transactions included: new TIDs must exceed it.
  Tid max_tid() const;
  // A TID for a commit that was given none: the clock's, or max_tid() + 1.
  Tid new_tid(const Clock* clock) const;
  // A commit in two steps, as ZODB's FileStorage makes it, so that a full disk or a
  // failed write fails the vote and not the finish. stage (at vote, the commit lock held)
  // appends the transaction with status 'c', which every reader stops at and a writable
  // open cuts off; publish (at finish) writes its real status, syncs when the options
  // say so, and makes it visible: `on_tid` runs after that and before other instances can
  // see it. unstage (at abort) truncates the file back.
  struct Staged {
    Tid tid;
    char status;
    uint64_t tpos;
    uint64_t size;
    std::vector<uint64_t> positions;  // of the records, in order
  };
  Staged stage(Tid tid, char status, const TransactionMetaData& meta,
               const std::vector<PendingRecord>& records);
  void publish(const Staged& staged, const std::vector<PendingRecord>& records,
               const std::function<void(Tid)>& on_tid);
  void unstage(const Staged& staged) noexcept;
  void require_writable() const;

 private:
  std::string conversion_note_path() const;
  void build_index();
  Scanner scanner() const;  // over the current mapping; caller holds mu_
  // The revision of the object whose newest record is at `pos` that was current just
  // before `before` (the newest when none), with the TID of the one after it; none when
  // the object only has later ones. Caller holds mu_.
  std::optional<Revision> revision_as_of(const Scanner& sc, uint64_t pos,
                                         std::optional<Tid> before) const;
  void check_open() const;

  const std::string path_;
  FileStorageOptions options_;
  std::unique_ptr<AppendFile> file_;  // null when read-only

  mutable std::shared_mutex mu_;  // guards everything below
  bool closed_ = false;
  std::shared_ptr<const FileMap> map_;
  std::string magic_;
  uint64_t end_ = kMagicSize;  // end of the last complete transaction
  Tid last_tid_;
  Tid max_tid_;
  uint64_t transactions_ = 0;
  OidIndex index_;
  uint64_t next_oid_ = 1;
  uint64_t generation_ = 0;
  struct Commit {
    Tid tid;
    std::vector<Oid> oids;
  };
  std::deque<Commit> log_;  // commits made through this object, for poll_invalidations
  Tid log_floor_;           // commits at or before this are no longer in the log

  std::mutex commit_mu_;
  std::condition_variable commit_cv_;
  bool committing_ = false;

  mutable std::mutex resolver_mu_;
  ConflictResolver resolver_;
  std::atomic<uint64_t> commits_{0};
};

}  // namespace relstore::fs
