#include "storage/db_instance.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <mutex>
#include <shared_mutex>

#include "backend/oid_order.h"
#include "conflict_resolution.h"
#include "md5.h"
#include "relstore/errors.h"
#include "storage/db_storage.h"
#include "storage/undo.h"

namespace relstore {
namespace {

// The known-current map is a cache of this snapshot; past this size it is simply dropped.
constexpr size_t kMaxKnown = 1u << 20;
// Own commits a poll skips; past this many (a writer that never polls) they are forgotten,
// and the next poll reports their objects as changed, which costs reloads, not correctness.
constexpr size_t kMaxOwnCommits = 1u << 16;

// SQL stores TIDs as signed BIGINT; no real TID reaches 2**63 (the year 5908), so larger
// bounds are clamped rather than wrapped to negative numbers.
constexpr Tid kMaxSqlTid(0x7fffffffffffffffULL);

}  // namespace

DbInstance::DbInstance(std::shared_ptr<DbStorage> storage, std::optional<Tid> before)
    : owner_(std::move(storage)), storage_(*owner_), before_(before) {}

DbInstance::~DbInstance() {
  if (txn_) tpc_abort(*txn_);
}

bool DbInstance::is_read_only() const { return before_.has_value() || storage_.is_read_only(); }

void DbInstance::require_writable() const {
  if (before_) throw ReadOnlyError("a historical instance is read-only");
  if (storage_.is_read_only()) throw ReadOnlyError();
}

backend::LoadConnection& DbInstance::load_conn() {
  if (released_) throw StorageError("the storage instance was released");
  if (!load_) load_ = storage_.adapter().open_load();
  return *load_;
}

// ---------------------------------------------------------------- snapshot

void DbInstance::restart_snapshot() {
  auto& conn = load_conn();
  // Without an earlier snapshot, what this instance knows comes from its own commits: the
  // changes since just before the first of them tell which of those states are stale.
  std::optional<Tid> since;
  if (had_snapshot_) {
    since = snapshot_tid_;
  } else if (first_own_commit_) {
    since = Tid(first_own_commit_->value() - 1);
  }
  backend::PollResult r;
  // Taken before the snapshot: a zap clearing the cache after this point makes the puts of
  // what this snapshot reads void.
  cache_generation_ = storage_.cache().generation();
  ++snapshot_serial_;
  // Until the new snapshot is known, there is none: a poll that fails part-way may have
  // moved the connection to a new snapshot already, and cached states of the old one must
  // not be served beside reads from it. The next access starts over from snapshot_tid_.
  in_snapshot_ = false;
  try {
    const auto visible = storage_.see_commits();
    r = conn.begin_snapshot(since);
  } catch (...) {
    conn.end_snapshot();  // whatever the failed poll left open on the server
    throw;
  }
  in_snapshot_ = true;
  if (r.mirror_mode) storage_.note_mirror_mode(*r.mirror_mode);
  // The storage empties its cache when the mark moved (for instances that began after the
  // move too). This snapshot's generation stays the one taken before it: concurrent polls
  // may straddle the move, and one from before it must not fill the new generation.
  storage_.note_poll_mark(r.mark);
  if (r.changes) {
    for (const auto& [oid, tid] : *r.changes) {
      if (own_commits_.count(tid)) continue;  // our own commit: the cache already has it
      known_.erase(oid);
      pending_.insert(oid);
    }
  } else if (had_snapshot_ || !known_.empty()) {
    // The poll could not list what changed: objects deleted (history-free), the database
    // zapped or its history replaced (the poll's mark moved), or no baseline while this
    // instance holds states of its own commits. After a zap an (oid, tid) key read before
    // may come back with other bytes (a refill from another source), and the mark alone
    // cannot always tell a zap from a deletion: the shared cache starts over too.
    pending_everything_ = true;
    known_.clear();
    if (had_snapshot_) forget_cached_states();
  }
  // The newest transaction this instance has seen: its last snapshot's, or its own commits
  // since. Older now means the database went back in time (restored, zapped): nothing we
  // know holds, our own commits included, and the (oid, tid) keys of the cache may come
  // back with other bytes.
  const Tid seen = had_snapshot_ ? std::max(snapshot_tid_, newest_own_write_) : newest_own_write_;
  if (r.last_tid < seen) {
    pending_everything_ = true;
    known_.clear();
    last_own_commit_ = Tid(0);
    forget_cached_states();
  }
  own_commits_.clear();
  newest_own_write_ = Tid(0);
  first_own_commit_.reset();
  had_snapshot_ = true;
  snapshot_tid_ = r.last_tid;
}

// An adapter's iterator uses its adapter (connection settings, the round-trip counter):
// it keeps the storage alive, as instances do, and goes before it.
class DbInstance::OwningIterator : public TransactionIterator {
 public:
  OwningIterator(std::shared_ptr<DbStorage> owner, std::unique_ptr<TransactionIterator> inner)
      : owner_(std::move(owner)), inner_(std::move(inner)) {}
  // Once a step has failed, the iterator is done for: its snapshot may be gone (SQLite ends
  // a read transaction after an I/O error) and the adapters have already moved past the
  // transaction that failed, so going on would skip it or read outside the snapshot.
  bool next(TransactionRecord& out) override {
    if (failed_) throw StorageError("an earlier step of this iterator failed; start a new one");
    try {
      return inner_->next(out);
    } catch (...) {
      failed_ = true;
      throw;
    }
  }

 private:
  std::shared_ptr<DbStorage> owner_;  // declared first: destroyed after inner_
  std::unique_ptr<TransactionIterator> inner_;
  bool failed_ = false;
};

void DbInstance::forget_cached_states() {
  storage_.cache().clear();
  cache_generation_ = storage_.cache().generation();
}

void DbInstance::note_known(Oid oid, Tid tid) {
  // A bound on what an instance remembers: states it loads or commits without polling in
  // between would otherwise pile up (a writer that never polls, a copy). Forgetting costs
  // cache lookups only.
  if (known_.size() >= kMaxKnown) known_.clear();
  known_[oid] = tid;
}

void DbInstance::ensure_snapshot() {
  if (!in_snapshot_) restart_snapshot();
}

std::optional<std::vector<Oid>> DbInstance::poll_invalidations() {
  if (before_) return std::vector<Oid>{};
  restart_snapshot();
  std::optional<std::vector<Oid>> out;
  if (!pending_everything_) out.emplace(pending_.begin(), pending_.end());
  pending_.clear();
  pending_everything_ = false;
  return out;
}

void DbInstance::sync() {
  if (load_ && in_snapshot_) load_->end_snapshot();
  in_snapshot_ = false;
}

void DbInstance::release_snapshot() { sync(); }

void DbInstance::release() {
  if (txn_) tpc_abort(*txn_);
  if (load_) load_->end_snapshot();
  load_.reset();
  in_snapshot_ = false;
  released_ = true;
}

// ---------------------------------------------------------------- reads

LoadResult DbInstance::load(Oid oid) {
  if (before_) {
    auto r = load_before(oid, *before_);
    if (!r) throw POSKeyError(oid);
    return {std::move(r->data), r->start};
  }
  ensure_snapshot();
  if (auto it = known_.find(oid); it != known_.end()) {
    if (auto hit = storage_.cache().get(oid, it->second)) {
      storage_.count_hit();
      return {std::move(*hit), it->second};
    }
  }
  storage_.count_miss();
  auto row = load_conn().load_current(oid);
  if (!row || !row->state) throw POSKeyError(oid);
  note_known(oid, row->tid);
  storage_.cache().put(oid, row->tid, *row->state, cache_generation_);
  return {std::move(*row->state), row->tid};
}

std::optional<LoadBeforeResult> DbInstance::load_before(Oid oid, Tid tid) {
  // A historical instance sees nothing from its TID on: not as an answer, not as the end
  // of one, and an object first written after it does not exist yet.
  const Tid visible = before_ ? std::min(*before_, kMaxSqlTid) : kMaxSqlTid;
  const Tid asked = std::min(tid, visible);
  ensure_snapshot();
  auto& conn = load_conn();
  auto row = conn.load_before(oid, asked);
  if (!row) {
    if (!conn.exists(oid)) throw POSKeyError(oid);
    if (before_ && (tid >= *before_ || !conn.load_before(oid, visible))) throw POSKeyError(oid);
    return std::nullopt;
  }
  if (!row->state) throw POSKeyError(oid);  // deleted (or creation undone) at that point
  if (before_ && row->end && *row->end >= *before_) row->end.reset();
  return LoadBeforeResult{std::move(*row->state), row->start, row->end};
}

Bytes DbInstance::load_serial(Oid oid, Tid tid) {
  if (auto hit = storage_.cache().get(oid, tid)) return std::move(*hit);
  ensure_snapshot();
  auto row = load_conn().load_revision(oid, tid);
  if (!row || !row->state) throw POSKeyError(oid, tid);
  storage_.cache().put(oid, tid, *row->state, cache_generation_);
  return std::move(*row->state);
}

std::vector<HistoryEntry> DbInstance::history(Oid oid, size_t size) {
  ensure_snapshot();
  auto& conn = load_conn();
  // SQL's LIMIT is signed: "everything" must not become -1 (PostgreSQL refuses it).
  constexpr size_t kAll = std::numeric_limits<int64_t>::max();
  // A historical instance drops the newer entries first, then keeps `size`.
  auto h = conn.history(oid, before_ ? kAll : std::min(size, kAll));
  if (before_) std::erase_if(h, [&](const HistoryEntry& e) { return e.tid >= *before_; });
  if (h.empty() && (size > 0 || before_ || !conn.exists(oid))) throw POSKeyError(oid);
  if (h.size() > size) h.resize(size);
  return h;
}

Tid DbInstance::last_transaction() {
  if (before_) {
    ensure_snapshot();
    return std::min(snapshot_tid_, Tid(before_->value() - 1));
  }
  ensure_snapshot();
  return std::max(snapshot_tid_, last_own_commit_);
}

std::unique_ptr<TransactionIterator> DbInstance::iterator(std::optional<Tid> start,
                                                          std::optional<Tid> stop) {
  if (start && *start > kMaxSqlTid) {
    start = Tid(1);  // nothing can be that late: an empty range
    stop = Tid(0);
  }
  if (stop && *stop > kMaxSqlTid) stop = kMaxSqlTid;
  // The iterator takes its snapshot when it opens: not while a commit of this storage is
  // between its COMMIT and its finish callback (line 8), as for polls.
  const auto visible = storage_.see_commits();
  return std::make_unique<OwningIterator>(owner_, storage_.adapter().open_iterator(start, stop));
}

std::optional<RecordIterResult> DbInstance::record_iternext(std::optional<Oid> next) {
  // A walk over every object asks once per object; a page a round trip instead of two
  // rows (a verify of 100,000 objects took 5 s, most of it round trips).
  constexpr size_t kPage = 256;
  ensure_snapshot();
  const Oid from = next.value_or(Oid(0));
  auto& ahead = iter_ahead_;
  const auto fetch = [&](Oid at) {
    for (auto& row : backend::current_records_in_oid_order(load_conn(), at, kPage, before_)) {
      ahead.push_back(std::move(row));
    }
  };
  if (iter_serial_ != snapshot_serial_ || ahead.empty() || ahead.front().first != from) {
    ahead.clear();
    iter_serial_ = snapshot_serial_;
    fetch(from);
  }
  if (ahead.empty()) return std::nullopt;
  // The next oid is the record after this one: read on when it is the page's last.
  if (ahead.size() == 1 && ahead.front().first.value() != ~uint64_t{0}) {
    fetch(Oid(ahead.front().first.value() + 1));
  }
  RecordIterResult r;
  r.oid = ahead.front().first;
  r.tid = ahead.front().second.tid;
  r.data = std::move(*ahead.front().second.state);
  ahead.pop_front();
  if (!ahead.empty()) r.next = ahead.front().first;
  return r;
}

// ---------------------------------------------------------------- two-phase commit

Oid DbInstance::new_oid() {
  require_writable();
  return storage_.new_oid();
}

void DbInstance::check_txn(const TransactionMetaData& txn, Phase phase, const char* call) const {
  if (txn_ != &txn) {
    throw StorageTransactionError(std::string(call) + ": not the transaction begun with tpc_begin");
  }
  if (phase_ != phase) {
    throw StorageTransactionError(std::string(call) + ": called in the wrong phase of the commit");
  }
}

void DbInstance::tpc_begin(const TransactionMetaData& txn, std::optional<Tid> tid, char status) {
  require_writable();
  if (txn_) {
    throw StorageTransactionError(txn_ == &txn ? "duplicate tpc_begin for the same transaction"
                                               : "tpc_begin while another transaction is active");
  }
  if (status != ' ' && status != 'p') {
    throw StorageTransactionError(std::string("unsupported transaction status '") + status + "'");
  }
  reset_txn();
  txn_ = &txn;
  phase_ = Phase::begun;
  forced_tid_ = tid;
  status_ = status;
}

void DbInstance::add_record(Oid oid, Tid prev, std::optional<Bytes> state) {
  drop_blob(oid);  // a blob stored with an earlier record of this commit is not this one's
  if (auto it = record_index_.find(oid); it != record_index_.end()) {
    // Stored twice in one transaction: the last state wins, the first serial stays.
    records_[it->second].state = std::move(state);
    return;
  }
  record_index_.emplace(oid, records_.size());
  records_.push_back({oid, prev, std::move(state), {}});
}

void DbInstance::store(Oid oid, std::optional<Tid> serial, const Bytes& data,
                       const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "store");
  add_record(oid, serial.value_or(Tid(0)), data);
}

void DbInstance::restore(Oid oid, Tid serial, const std::optional<Bytes>& data,
                         const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "restore");
  if (!forced_tid_) {
    forced_tid_ = serial;
  } else if (*forced_tid_ != serial) {
    throw StorageTransactionError("restore: serial " + serial.hex() +
                                  " differs from the transaction's TID " + forced_tid_->hex());
  }
  add_record(oid, Tid(0), data);
  restoring_ = true;
}

void DbInstance::check_current_serial(Oid oid, Tid serial, const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "check_current_serial");
  read_current_.push_back({oid, serial});
}

void DbInstance::delete_object(Oid oid, Tid serial, const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "delete_object");
  add_record(oid, serial, std::nullopt);
}

std::vector<UndoInfo> DbInstance::undo_log(int64_t first, int64_t last, const UndoFilter& filter) {
  if (!storage_.keep_history()) return {};
  ensure_snapshot();
  return undo::log(first, last, filter, [&](Tid below, size_t limit) {
    if (before_) below = std::min(below, *before_);
    return load_conn().undoable_transactions(below, limit);
  });
}

std::vector<Oid> DbInstance::undo(std::string_view id, const TransactionMetaData& txn) {
  require_writable();  // ReadOnlyError first, as ZODB's read-only storages do
  check_txn(txn, Phase::begun, "undo");
  if (!storage_.keep_history()) {
    throw UndoError("a history-free database keeps no history to undo");
  }
  const Tid tid = tid_of_undo_id(id);
  ensure_snapshot();
  // An id from another instance may name a transaction this snapshot does not see yet.
  if (tid > snapshot_tid_) restart_snapshot();
  auto& conn = load_conn();
  const auto listed = conn.undoable_transactions(Tid(tid.value() + 1), 1);
  if (listed.empty() || listed.front().tid != tid) {
    throw UndoError("cannot undo transaction " + tid.hex() +
                    ": the database has no such transaction, or a pack has removed its history");
  }
  // Every object is decided before any is added: an UndoError leaves the commit as it was.
  // Objects changed earlier in this commit (a second undo) are judged by that state.
  struct Change {
    Oid oid;
    Tid serial;
    std::optional<Bytes> state;
    // A temporary file with the blob of the revision brought back, when it has one.
    std::optional<std::string> blob;
  };
  std::vector<Change> changes;
  // An UndoError (or any error) below leaves no temporary blob file behind.
  struct Cleanup {
    std::vector<Change>& changes;
    bool armed = true;
    ~Cleanup() {
      if (!armed) return;
      for (const auto& c : changes) {
        std::error_code ec;
        if (c.blob) std::filesystem::remove(*c.blob, ec);
      }
    }
  } cleanup{changes};
  for (auto& [oid, undone] : conn.transaction_records(tid)) {
    undo::Revisions r{oid, std::move(undone), std::nullopt, std::nullopt, Tid(0)};
    std::optional<Tid> before_tid;
    if (auto before = conn.load_before(oid, tid)) {
      r.before = std::move(before->state);
      before_tid = before->start;
    }
    Tid serial;
    if (auto it = record_index_.find(oid); it != record_index_.end()) {
      r.current = records_[it->second].state;
      serial = r.current_tid = records_[it->second].prev_tid;
    } else if (auto current = conn.load_current(oid)) {
      r.current = std::move(current->state);
      serial = r.current_tid = current->tid;
    }
    Change c{oid, serial, undo::state_after(r, tid, storage_.resolver()), std::nullopt};
    // The revision brought back as it was takes its blob along (a merged state has none:
    // blobs do not resolve conflicts).
    if (before_tid && c.state && c.state == r.before) {
      const Oid o = oid;
      const Tid at = *before_tid;
      if (storage_.has_blob_dir()) {
        c.blob = storage_.blob_dir("undo").write_temporary_from(
            [&](const BlobDir::PieceWriter& write) { return conn.load_blob(o, at, write); });
      } else {
        // Without a blob directory only a revision without a blob can come back: the
        // first piece of one stops the undo, with the error that names the option.
        conn.load_blob(o, at,
                       [&](std::string_view) { storage_.blob_dir("undo of a blob revision"); });
      }
    }
    changes.push_back(std::move(c));
  }
  cleanup.armed = false;  // from here every file belongs to the commit (blobs_)
  std::vector<Oid> oids;
  for (auto& c : changes) {
    add_record(c.oid, c.serial, std::move(c.state));
    if (c.blob) blobs_[c.oid] = std::move(*c.blob);
    oids.push_back(c.oid);
  }
  return oids;
}

Bytes DbInstance::resolve(const backend::ConflictRow& c, const backend::PendingRecord& mine) {
  const ConflictError unresolved(c.oid, std::make_pair(c.committed, c.given));
  ConflictResolver resolver = storage_.resolver();
  if (!resolver || !mine.state || !c.committed_state || c.given.is_zero()) throw unresolved;
  std::optional<Bytes> old = storage_.cache().get(c.oid, c.given);
  if (!old) {
    auto row = load_conn().load_revision(c.oid, c.given);
    if (row && row->state) old = std::move(row->state);
  }
  return resolve_with(resolver,
                      ConflictInput{c.oid, c.given, c.committed, old ? &*old : nullptr,
                                    *c.committed_state, *mine.state},
                      unresolved);
}

std::vector<Oid> DbInstance::tpc_vote(const TransactionMetaData& txn) {
  check_txn(txn, Phase::begun, "tpc_vote");
  std::sort(records_.begin(), records_.end(),
            [](const auto& a, const auto& b) { return a.oid < b.oid; });
  record_index_.clear();
  for (size_t i = 0; i < records_.size(); ++i) record_index_[records_[i].oid] = i;
  if (storage_.keep_history()) {
    for (auto& r : records_) {
      if (r.state) {
        r.md5 = md5_hex(*r.state);
      } else if (!restoring_) {
        r.md5 = std::string();
      }
    }
  }
  // One check per (object, serial): the same read twice is checked once.
  std::sort(read_current_.begin(), read_current_.end(), [](const auto& a, const auto& b) {
    return a.oid != b.oid ? a.oid < b.oid : a.serial < b.serial;
  });
  read_current_.erase(std::unique(read_current_.begin(), read_current_.end(),
                                  [](const auto& a, const auto& b) {
                                    return a.oid == b.oid && a.serial == b.serial;
                                  }),
                      read_current_.end());

  std::vector<Oid> resolved;
  try {
    store_ = storage_.borrow_store();
    if (!records_.empty()) storage_.note_stored_oid(records_.back().oid, *store_);
    backend::VoteRequest req;
    req.records = records_;
    req.read_current = read_current_;
    const auto blobs = pending_blobs();
    req.blobs = blobs;
    req.check_conflicts = !restoring_;
    req.forced_tid = forced_tid_;
    req.lock_timeout = storage_.options().commit_lock_timeout;
    const auto conflicts = store_->vote(req);
    std::vector<backend::PendingRecord> replaced;
    for (const auto& c : conflicts) {
      auto& mine = records_[record_index_.at(c.oid)];
      mine.state = resolve(c, mine);
      if (storage_.keep_history()) mine.md5 = md5_hex(*mine.state);
      mine.prev_tid = c.committed;
      replaced.push_back(mine);
      resolved.push_back(c.oid);
    }
    if (!replaced.empty()) store_->replace(replaced);
  } catch (...) {
    // Nothing can come of this transaction: give the locks back now, not at tpc_abort.
    if (store_) {
      store_->rollback();
      storage_.give_back(std::move(store_));
    }
    throw;
  }
  phase_ = Phase::voted;
  return resolved;
}

Tid DbInstance::tpc_finish(const TransactionMetaData& txn, const std::function<void(Tid)>& on_tid) {
  check_txn(txn, Phase::voted, "tpc_finish");
  backend::FinishRequest req;
  req.meta = txn_;
  req.records = records_;
  // In-commit JSON mirror: rows of the final states (after conflict resolution), written
  // by finish in the same database transaction. Decoding never fails the commit.
  mirror::Batch mirror_rows;
  if (store_->mirror_in_commit().value_or(storage_.mirror_in_commit())) {
    if (!decoder_) decoder_ = std::make_unique<RecordDecoder>();
    const DecodeOptions options = storage_.adapter().mirror_decode_options();
    for (const auto& r : records_) {
      mirror::add_state(r.oid, Tid(0), r.state, *decoder_, options, mirror_rows);
    }
    req.mirror = &mirror_rows;
  }
  req.forced_tid = forced_tid_;
  req.status = status_;
  req.now = storage_.now();
  req.lock_timeout = storage_.options().commit_lock_timeout;
  // End our read snapshot first: an old snapshot held across the commit keeps SQLite from
  // checkpointing its WAL and PostgreSQL from vacuuming (RelStorage does the same). The
  // next read begins a new snapshot; what others changed meanwhile is kept for the poll.
  if (load_ && in_snapshot_) {
    load_->end_snapshot();
    in_snapshot_ = false;
  }
  Tid tid;
  const uint64_t generation = storage_.cache().generation();
  const auto visible = storage_.show_commit();
  try {
    tid = store_->finish(req);
  } catch (...) {
    store_->rollback();
    storage_.give_back(std::move(store_));
    reset_txn();
    throw;
  }
  storage_.count_commit();
  storage_.give_back(std::move(store_));
  publish_blobs(tid);
  for (const auto& r : records_) {
    if (r.state) {
      storage_.cache().put(r.oid, tid, *r.state, generation);
      note_known(r.oid, tid);
    } else {
      known_.erase(r.oid);
    }
  }
  // Polls skip rows carrying a TID of our own commits. Only a commit that wrote rows owns
  // its TID: a history-free database keeps no trace of an empty or delete-only commit, so
  // with the clock behind another committer can be given the same TID.
  // (History-preserving deletions write a row too.)
  const bool wrote_rows =
      storage_.keep_history()
          ? !records_.empty()
          : std::any_of(records_.begin(), records_.end(),
                        [](const backend::PendingRecord& r) { return r.state.has_value(); });
  if (wrote_rows) {
    if (own_commits_.size() >= kMaxOwnCommits) own_commits_.clear();
    own_commits_.insert(tid);
    newest_own_write_ = std::max(newest_own_write_, tid);
  }
  last_own_commit_ = std::max(last_own_commit_, tid);
  if (!had_snapshot_ && !first_own_commit_) first_own_commit_ = tid;
  reset_txn();
  // The commit is durable; the callback runs before any instance of this storage can
  // start a snapshot that sees it.
  if (on_tid) {
    DbStorage::CallbackScope scope(storage_);
    on_tid(tid);
  }
  return tid;
}

void DbInstance::tpc_abort(const TransactionMetaData& txn) noexcept {
  if (txn_ != &txn) return;
  if (store_) {
    store_->rollback();
    storage_.give_back(std::move(store_));
  }
  reset_txn();
}

void DbInstance::reset_txn() noexcept {
  txn_ = nullptr;
  phase_ = Phase::idle;
  forced_tid_.reset();
  status_ = ' ';
  restoring_ = false;
  records_.clear();
  record_index_.clear();
  read_current_.clear();
  discard_blobs();
}

}  // namespace relstore
