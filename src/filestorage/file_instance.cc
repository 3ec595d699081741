#include "filestorage/file_instance.h"

#include <algorithm>

#include "conflict_resolution.h"

namespace relstore::fs {

FileInstance::FileInstance(std::shared_ptr<FileStorage> storage, std::optional<Tid> before,
                           bool read_only, std::shared_ptr<Clock> clock)
    : owner_(std::move(storage)),
      storage_(*owner_),
      before_(before),
      read_only_(read_only),
      clock_(std::move(clock)) {}

FileInstance::~FileInstance() {
  if (txn_) tpc_abort(*txn_);
}

// ---------------------------------------------------------------- snapshot

Tid FileInstance::snapshot() {
  if (!in_snapshot_) {
    snapshot_tid_ = storage_.last_tid();
    if (!polled_) {
      poll_base_ = snapshot_tid_;
      generation_ = storage_.generation();
      polled_ = true;
    }
    in_snapshot_ = true;
  }
  return snapshot_tid_;
}

std::optional<std::vector<Oid>> FileInstance::poll_invalidations() {
  if (before_) return std::vector<Oid>{};
  const bool had_base = polled_;
  in_snapshot_ = false;
  const Tid base = poll_base_;
  const uint64_t generation = generation_;
  const Tid now = snapshot();
  std::optional<std::vector<Oid>> out = std::vector<Oid>{};
  // zap_all since the base, or since this instance's own commits (made before any poll
  // too): everything is gone, those commits included.
  const bool zapped = (had_base && storage_.generation() != generation) ||
                      (!own_commits_.empty() && storage_.generation() != own_generation_);
  if (zapped) {
    out.reset();
    own_commits_.clear();
    last_own_commit_ = Tid(0);
  } else if (had_base) {
    out = storage_.changes_since(base, own_commits_);
  }
  poll_base_ = now;
  generation_ = storage_.generation();
  std::erase_if(own_commits_, [&](Tid t) { return t <= now; });
  return out;
}

void FileInstance::sync() { in_snapshot_ = false; }

void FileInstance::release() {
  if (txn_) tpc_abort(*txn_);
  in_snapshot_ = false;
}

// ---------------------------------------------------------------- reads

Tid FileInstance::visible_before() {
  if (before_) return *before_;
  const Tid snap = snapshot();
  return snap.value() == ~uint64_t{0} ? snap : Tid(snap.value() + 1);
}

LoadResult FileInstance::load(Oid oid) {
  const auto rev = storage_.revision_before(oid, visible_before());
  if (!rev) throw POSKeyError(oid);
  auto data = storage_.data_of(rev->rec);
  if (!data) throw POSKeyError(oid);
  return {std::move(*data), rev->rec.tid};
}

std::optional<LoadBeforeResult> FileInstance::load_before(Oid oid, Tid tid) {
  // Answered from the snapshot, as the database backends do: a revision committed after
  // it is not there, so it neither answers nor ends the one before.
  const Tid visible = visible_before();
  auto rev = storage_.revision_before(oid, std::min(tid, visible));
  if (!rev) {
    // Nothing before `tid`: an object created later in the snapshot, or not in it at all.
    if (tid > visible || !storage_.revision_before(oid, visible)) throw POSKeyError(oid);
    return std::nullopt;
  }
  if (rev->end && *rev->end >= visible) rev->end.reset();
  auto data = storage_.data_of(rev->rec);
  if (!data) throw POSKeyError(oid);  // deleted (or creation undone) at that point
  return LoadBeforeResult{std::move(*data), rev->rec.tid, rev->end};
}

Bytes FileInstance::load_serial(Oid oid, Tid tid) {
  const auto rec = storage_.revision_at(oid, tid);
  if (!rec) throw POSKeyError(oid, tid);
  auto data = storage_.data_of(*rec);
  if (!data) throw POSKeyError(oid, tid);
  return std::move(*data);
}

std::vector<HistoryEntry> FileInstance::history(Oid oid, size_t size) {
  return storage_.history(oid, size, visible_before());
}

Tid FileInstance::last_transaction() {
  const Tid snap = snapshot();
  if (before_) return std::min(snap, Tid(before_->value() - 1));
  return std::max(snap, last_own_commit_);
}

std::unique_ptr<TransactionIterator> FileInstance::iterator(std::optional<Tid> start,
                                                            std::optional<Tid> stop) {
  return storage_.iterator(start, stop);
}

std::optional<RecordIterResult> FileInstance::record_iternext(std::optional<Oid> next) {
  return storage_.record_iternext(next, visible_before());
}

bool FileInstance::is_read_only() const {
  return read_only_ || before_.has_value() || storage_.is_read_only();
}

// ---------------------------------------------------------------- two-phase commit

void FileInstance::require_writable() const {
  if (before_) throw ReadOnlyError("a historical instance is read-only");
  if (read_only_) throw ReadOnlyError("FileStorage " + storage_.name() + " was opened read-only");
  storage_.require_writable();
}

Oid FileInstance::new_oid() {
  require_writable();
  return storage_.new_oid();
}

void FileInstance::check_txn(const TransactionMetaData& txn, Phase phase, const char* call) const {
  if (txn_ != &txn) {
    throw StorageTransactionError(std::string(call) + ": not the transaction begun with tpc_begin");
  }
  if (phase_ != phase) {
    throw StorageTransactionError(std::string(call) + ": called in the wrong phase of the commit");
  }
}

void FileInstance::tpc_begin(const TransactionMetaData& txn, std::optional<Tid> tid, char status) {
  require_writable();
  if (txn_) {
    throw StorageTransactionError(txn_ == &txn ? "tpc_begin: this transaction is already begun"
                                               : "tpc_begin: another transaction is in progress");
  }
  if (status != ' ' && status != 'p') {
    throw StorageTransactionError("tpc_begin: transaction status must be ' ' or 'p', not '" +
                                  std::string(1, status) + "'");
  }
  check_metadata_lengths(txn);
  storage_.lock_commit();
  if (tid && *tid <= storage_.max_tid()) {
    const Tid last = storage_.max_tid();
    storage_.unlock_commit();
    throw StorageTransactionError("tpc_begin: tid " + tid->hex() + " is not after the last tid " +
                                  last.hex() + " of FileStorage " + storage_.name() +
                                  " (TIDs must increase)");
  }
  txn_ = &txn;
  phase_ = Phase::begun;
  forced_tid_ = tid;
  status_ = status;
}

void FileInstance::add_record(Oid oid, std::optional<Bytes> data) {
  if (data && data->empty()) {
    // plen 0 means "back pointer follows": an empty record has no encoding in Data.fs.
    throw StorageError("FileStorage cannot store an empty record (oid " + oid.hex() + ")");
  }
  // Storing an oid twice in one transaction keeps the last state, as other backends do.
  const auto [it, inserted] = record_index_.try_emplace(oid, records_.size());
  if (inserted) {
    records_.push_back({oid, std::move(data)});
  } else {
    records_[it->second].data = std::move(data);
  }
}

Bytes FileInstance::resolve_conflict(Oid oid, Tid given, Tid committed, const Bytes& mine) {
  const ConflictError unresolved(oid, std::make_pair(committed, given));
  const ConflictResolver resolver = storage_.resolver();
  if (!resolver || given.is_zero()) throw unresolved;
  std::optional<Bytes> committed_state;
  std::optional<Bytes> old;
  try {
    committed_state = load_serial(oid, committed);
    old = load_serial(oid, given);
  } catch (const POSKeyError&) {
    if (!committed_state) throw unresolved;  // deleted meanwhile: nothing to merge with
  }
  return resolve_with(
      resolver, ConflictInput{oid, given, committed, old ? &*old : nullptr, *committed_state, mine},
      unresolved);
}

void FileInstance::store(Oid oid, std::optional<Tid> serial, const Bytes& data,
                         const TransactionMetaData& txn) {
  require_writable();
  check_txn(txn, Phase::begun, "store");
  add_record(oid, data);
  add_write_check({oid, serial.value_or(Tid(0)), Check::store});
}

void FileInstance::restore(Oid oid, Tid serial, const std::optional<Bytes>& data,
                           const TransactionMetaData& txn) {
  require_writable();
  check_txn(txn, Phase::begun, "restore");
  if (!forced_tid_) {
    if (serial <= storage_.max_tid()) {
      throw StorageTransactionError("restore: serial " + serial.hex() +
                                    " is not after the last tid " + storage_.max_tid().hex());
    }
    forced_tid_ = serial;
  } else if (*forced_tid_ != serial) {
    throw StorageTransactionError("restore: serial " + serial.hex() +
                                  " differs from the transaction's TID " + forced_tid_->hex());
  }
  add_record(oid, data);
}

void FileInstance::check_current_serial(Oid oid, Tid serial, const TransactionMetaData& txn) {
  require_writable();
  check_txn(txn, Phase::begun, "check_current_serial");
  checks_.push_back({oid, serial, Check::read_current});
}

void FileInstance::delete_object(Oid oid, Tid serial, const TransactionMetaData& txn) {
  require_writable();
  check_txn(txn, Phase::begun, "delete_object");
  add_record(oid, std::nullopt);
  add_write_check({oid, serial, Check::remove});
}

namespace {

StorageError no_undo(const std::string& path) {
  return StorageError(path +
                      ": relstore does not undo transactions of a Data.fs (ZODB's FileStorage "
                      "does); convert it into a history-preserving database to undo there");
}

}  // namespace

std::vector<UndoInfo> FileInstance::undo_log(int64_t, int64_t, const UndoFilter&) {
  throw no_undo(storage_.name());
}

std::vector<Oid> FileInstance::undo(std::string_view, const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "undo");
  throw no_undo(storage_.name());
}

void FileInstance::add_write_check(const SerialCheck& check) {
  // An object written twice in one transaction is one record, checked (and resolved) once
  // against the serial it was first written with, as on the database backends.
  if (write_checked_.insert(check.oid).second) checks_.push_back(check);
}

void FileInstance::check_serials() {
  // readCurrent first: a stale read makes the whole transaction moot.
  for (const SerialCheck& c : checks_) {
    if (c.kind != Check::read_current) continue;
    const Tid current = storage_.current_serial(c.oid).value_or(Tid(0));
    if (current != c.serial) throw ReadConflictError(c.oid, std::make_pair(current, c.serial));
  }
  for (const SerialCheck& c : checks_) {
    if (c.kind == Check::read_current) continue;
    const std::optional<Tid> current = storage_.current_serial(c.oid);
    if (c.kind == Check::remove) {
      if (!current) throw POSKeyError(c.oid);
      if (*current != c.serial) throw ConflictError(c.oid, std::make_pair(*current, c.serial));
      continue;
    }
    // A new object (unknown oid) takes any serial, as in ZODB's FileStorage.
    if (!current || *current == c.serial) continue;
    auto& record = records_[record_index_.at(c.oid)];
    if (!record.data) throw ConflictError(c.oid, std::make_pair(*current, c.serial));
    record.data = resolve_conflict(c.oid, c.serial, *current, *record.data);
    resolved_.push_back(c.oid);
  }
}

std::vector<Oid> FileInstance::tpc_vote(const TransactionMetaData& txn) {
  check_txn(txn, Phase::begun, "tpc_vote");
  // The commit lock is held since tpc_begin, so nothing can change between these checks
  // and tpc_finish.
  resolved_.clear();
  check_serials();
  tid_ = forced_tid_ ? *forced_tid_ : storage_.new_tid(clock_.get());
  // Written now, so that what can fail (a full disk) fails here; finish only writes the
  // status byte.
  staged_ = storage_.stage(tid_, status_, txn, records_);
  phase_ = Phase::voted;
  return resolved_;
}

Tid FileInstance::tpc_finish(const TransactionMetaData& txn,
                             const std::function<void(Tid)>& on_tid) {
  check_txn(txn, Phase::voted, "tpc_finish");
  // Read before the commit: a zap between the two then shows as one at the next poll.
  const uint64_t generation = storage_.generation();
  // A callback that throws does so after the commit is durable: the commit is then
  // recorded as this instance's like any other, and the error passed on after.
  std::exception_ptr callback_error;
  const auto callback = [&](Tid tid) {
    if (!on_tid) return;
    try {
      on_tid(tid);
    } catch (...) {
      callback_error = std::current_exception();
    }
  };
  try {
    const FileStorage::Staged staged = std::move(*staged_);
    staged_.reset();  // published or, when that fails, truncated away by publish
    storage_.publish(staged, records_, callback);
  } catch (...) {
    reset_txn();
    throw;
  }
  const Tid tid = tid_;
  own_commits_.insert(tid);
  last_own_commit_ = std::max(last_own_commit_, tid);
  // The generation of the first own commit since the last poll: a zap between two of them
  // must still show at the next poll.
  if (own_commits_.size() == 1) own_generation_ = generation;
  // As the database backends do: the next read starts a snapshot that holds this commit
  // (and whatever others committed meanwhile, which the next poll still reports).
  in_snapshot_ = false;
  reset_txn();
  if (callback_error) std::rethrow_exception(callback_error);
  return tid;
}

void FileInstance::tpc_abort(const TransactionMetaData& txn) noexcept {
  if (txn_ != &txn) return;
  reset_txn();
}

void FileInstance::reset_txn() noexcept {
  if (staged_) storage_.unstage(*staged_);  // an abort after vote
  staged_.reset();
  if (txn_) storage_.unlock_commit();
  txn_ = nullptr;
  phase_ = Phase::idle;
  forced_tid_.reset();
  records_.clear();
  record_index_.clear();
  resolved_.clear();
  checks_.clear();
  write_checked_.clear();
}

}  // namespace relstore::fs
