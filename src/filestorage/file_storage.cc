#include "filestorage/file_storage.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "filestorage/file_instance.h"
#include "filestorage/iterators.h"
#include "relstore/timestamp.h"

namespace relstore::fs {
namespace {

// How many commits poll_invalidations can look back over; an instance whose snapshot is
// older is told "everything changed", which is always correct.
constexpr size_t kLogLimit = 10000;

}  // namespace

FileStorage::FileStorage(std::string path, FileStorageOptions options)
    : path_(std::move(path)), options_(std::move(options)) {
  if (!options_.clock) options_.clock = system_clock();
  if (options_.read_only) {
    map_ = FileMap::open(path_);
    build_index();
    return;
  }
  // Lock before reading, so no other writer appends while we index.
  file_ = AppendFile::open(path_, options_.create, options_.create_magic);
  const uint64_t size = file_->size();
  map_ = FileMap::map(file_->fd(), path_, size);
  build_index();
  // Only once the file has proved readable: a file refused keeps its index.
  file_->remove_index();
  if (end_ < size) {
    const std::string tail = file_->cut_tail(end_);
    Scanner(map_, options_.on_warning)
        .warn(path_ + ": moved the " + std::to_string(size - end_) +
              " bytes after the last complete transaction (byte offset " + std::to_string(end_) +
              ") to " + tail + " before appending");
    map_ = FileMap::map(file_->fd(), path_, end_);
  }
}

FileStorage::~FileStorage() {
  try {
    close();
  } catch (...) {
    // A destructor cannot report a failed fsync; close() reports it to callers who ask.
  }
}

void FileStorage::build_index() {
  Scanner sc(map_, options_.on_warning);
  magic_ = std::string(sc.check_magic());
  map_->advise_sequential();
  uint64_t pos = kMagicSize;
  TxnHeader h;
  std::vector<DataHeader> records;
  while (sc.next(pos, h, &records)) {
    for (const DataHeader& d : records) {
      // A record's previous revision must be a record of its oid: an oid field damaged in
      // the file shows here, as ZODB's own index build notices it, instead of the record
      // being read (and copied) as another object.
      if (d.prev != 0) sc.prev_record(d);
      // A back-pointer chain may end in absence, so only records with data are surely there.
      const bool absent = d.plen == 0 && !sc.resolve(d);
      index_.set(d.oid, d.pos, absent);
    }
    last_tid_ = h.tid;
    ++transactions_;
  }
  end_ = pos;
  max_tid_ = sc.last_tid().value_or(Tid(0));
  if (auto m = index_.max_oid()) next_oid_ = m->value() + 1;
  log_floor_ = last_tid_;
}

Scanner FileStorage::scanner() const { return Scanner(map_, options_.on_warning, end_); }

void FileStorage::check_open() const {
  if (closed_) throw StorageError("FileStorage " + path_ + " is closed");
}

void FileStorage::require_writable() const {
  // The option, not file_: close() moves file_ out under mu_, which callers may not hold.
  if (options_.read_only) {
    throw ReadOnlyError("FileStorage " + path_ +
                        " is open read-only (open it for writing to change it)");
  }
}

std::unique_ptr<StorageInstance> FileStorage::new_instance(bool read_only,
                                                           std::shared_ptr<Clock> clock) {
  return std::make_unique<FileInstance>(shared_from_this(), std::nullopt, read_only,
                                        std::move(clock));
}

std::unique_ptr<StorageInstance> FileStorage::historical_instance(Tid before) {
  return std::make_unique<FileInstance>(shared_from_this(), before, true, nullptr);
}

void FileStorage::set_conflict_resolver(ConflictResolver resolver) {
  std::lock_guard lock(resolver_mu_);
  resolver_ = std::move(resolver);
}

ConflictResolver FileStorage::resolver() const {
  std::lock_guard lock(resolver_mu_);
  return resolver_;
}

uint64_t FileStorage::len() {
  std::shared_lock lock(mu_);
  return index_.live();
}

uint64_t FileStorage::size() {
  std::shared_lock lock(mu_);
  return end_;
}

StorageInfo FileStorage::info() {
  std::shared_lock lock(mu_);
  StorageInfo i;
  i.backend = "file";
  i.keep_history = true;
  i.objects = index_.live();
  i.transactions = transactions_;
  i.size_bytes = end_;
  i.last_tid = last_tid_;
  i.schema_version = magic_;
  // Two lines: the source, the start.
  std::ifstream note(conversion_note_path());
  UnfinishedConversion c;
  if (std::getline(note, c.source) && std::getline(note, c.started_at)) {
    i.unfinished_conversion = c;
  }
  return i;
}

// A Data.fs has no room for the note: it goes in a file beside it, as ZODB keeps its
// .index and .lock there.
std::string FileStorage::conversion_note_path() const { return path_ + ".relstore-conversion"; }

bool FileStorage::set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) {
  require_writable();
  const std::string path = conversion_note_path();
  if (!note) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (ec) throw StorageError("cannot remove " + path + ": " + ec.message());
    return true;
  }
  // Whole or not at all: written beside it, then renamed over it.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << note->source << '\n' << note->started_at << '\n';
    out.flush();
    if (!out) throw StorageError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw StorageError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return true;
}

StorageStats FileStorage::stats() const {
  StorageStats s;
  s.commits = commits_.load();
  return s;
}

Tid FileStorage::last_tid() const {
  std::shared_lock lock(mu_);
  return last_tid_;
}

Tid FileStorage::max_tid() const {
  std::shared_lock lock(mu_);
  return max_tid_;
}

uint64_t FileStorage::generation() const {
  std::shared_lock lock(mu_);
  return generation_;
}

std::optional<FileStorage::Revision> FileStorage::revision_as_of(const Scanner& sc, uint64_t pos,
                                                                 std::optional<Tid> before) const {
  Revision r{sc.data_header_at(pos), std::nullopt};
  while (before && r.rec.tid >= *before) {
    if (r.rec.prev == 0) return std::nullopt;
    r.end = r.rec.tid;
    r.rec = sc.prev_record(r.rec);
  }
  return r;
}

std::optional<FileStorage::Revision> FileStorage::revision_before(Oid oid,
                                                                  std::optional<Tid> before) const {
  std::shared_lock lock(mu_);
  check_open();
  const auto entry = index_.find(oid);
  if (!entry) throw POSKeyError(oid);
  return revision_as_of(scanner(), entry->pos, before);
}

std::optional<DataHeader> FileStorage::revision_at(Oid oid, Tid tid) const {
  std::shared_lock lock(mu_);
  check_open();
  const auto entry = index_.find(oid);
  if (!entry) return std::nullopt;
  const Scanner sc = scanner();
  DataHeader rec = sc.data_header_at(entry->pos);
  while (rec.tid > tid) {
    if (rec.prev == 0) return std::nullopt;
    rec = sc.prev_record(rec);
  }
  if (rec.tid != tid) return std::nullopt;
  return rec;
}

std::optional<Bytes> FileStorage::data_of(const DataHeader& rec) const {
  std::shared_lock lock(mu_);
  check_open();
  const auto data = scanner().resolve(rec);
  if (!data) return std::nullopt;
  return Bytes(*data);
}

std::vector<HistoryEntry> FileStorage::history(Oid oid, size_t size,
                                               std::optional<Tid> before) const {
  std::shared_lock lock(mu_);
  check_open();
  const auto entry = index_.find(oid);
  if (!entry) throw POSKeyError(oid);
  const Scanner sc = scanner();
  std::vector<HistoryEntry> out;
  const auto newest = revision_as_of(sc, entry->pos, before);
  if (!newest) throw POSKeyError(oid);
  DataHeader rec = newest->rec;
  while (out.size() < size) {
    const TxnHeader t = sc.txn_header_at(rec.tloc);
    HistoryEntry e;
    e.tid = rec.tid;
    e.time = TimeStamp(rec.tid).unix_time();
    e.user = Bytes(sc.user(t));
    e.description = Bytes(sc.description(t));
    e.extension = Bytes(sc.extension(t));
    // The size of the revision's data even when it reuses another's (other backends store
    // the bytes again, and history should not differ between them).
    const auto data = sc.resolve(rec);
    e.size = data ? data->size() : 0;
    out.push_back(std::move(e));
    if (rec.prev == 0) break;
    rec = sc.prev_record(rec);
  }
  return out;
}

std::unique_ptr<TransactionIterator> FileStorage::iterator(std::optional<Tid> start,
                                                           std::optional<Tid> stop) const {
  std::shared_lock lock(mu_);
  check_open();
  return make_forward_iterator(map_, options_.on_warning, start, stop, end_);
}

std::optional<RecordIterResult> FileStorage::record_iternext(std::optional<Oid> next,
                                                             std::optional<Tid> before) const {
  std::shared_lock lock(mu_);
  check_open();
  const Scanner sc = scanner();
  std::function<bool(Oid, uint64_t)> live;
  if (before && *before <= last_tid_) {  // as of an older TID: walk back each chain
    live = [&](Oid, uint64_t pos) {
      const auto rev = revision_as_of(sc, pos, before);
      return rev && sc.resolve(rev->rec).has_value();
    };
  }
  const auto [oid, after] = index_.live_from(next.value_or(Oid(0)), live);
  if (!oid) return std::nullopt;
  const DataHeader rec = revision_as_of(sc, index_.find(*oid)->pos, before)->rec;
  RecordIterResult r;
  r.oid = *oid;
  r.tid = rec.tid;
  r.data = Bytes(*sc.resolve(rec));  // live: the chain ends in data
  r.next = after;
  return r;
}

std::optional<Tid> FileStorage::current_serial(Oid oid) const {
  std::shared_lock lock(mu_);
  check_open();
  const auto entry = index_.find(oid);
  if (!entry) return std::nullopt;
  return scanner().data_header_at(entry->pos).tid;
}

std::optional<std::vector<Oid>> FileStorage::changes_since(
    Tid since, const std::unordered_set<Tid>& own) const {
  std::shared_lock lock(mu_);
  if (since < log_floor_) return std::nullopt;
  std::vector<Oid> out;
  for (auto it = log_.rbegin(); it != log_.rend() && it->tid > since; ++it) {
    if (own.count(it->tid)) continue;
    out.insert(out.end(), it->oids.begin(), it->oids.end());
  }
  return out;
}

Oid FileStorage::new_oid() {
  require_writable();
  std::unique_lock lock(mu_);
  check_open();
  // Zero only after the largest OID: the next would be the root's.
  if (next_oid_ == 0) throw StorageError(path_ + ": no OIDs left (the file holds the largest)");
  return Oid(next_oid_++);
}

void FileStorage::lock_commit() {
  std::unique_lock lock(commit_mu_);
  const auto timeout = std::chrono::duration<double>(options_.commit_lock_timeout);
  if (!commit_cv_.wait_for(lock, timeout, [this] { return !committing_; })) {
    throw UnableToAcquireCommitLockError("FileStorage " + path_ +
                                         ": another commit held the commit lock too long");
  }
  committing_ = true;
}

void FileStorage::unlock_commit() noexcept {
  {
    std::lock_guard lock(commit_mu_);
    committing_ = false;
  }
  commit_cv_.notify_one();
}

Tid FileStorage::new_tid(const Clock* clock) const {
  return next_tid((clock ? clock : options_.clock.get())->now(), max_tid());
}

FileStorage::Staged FileStorage::stage(Tid tid, char status, const TransactionMetaData& meta,
                                       const std::vector<PendingRecord>& records) {
  require_writable();
  Staged staged{tid, status, 0, 0, {}};
  // Shared, not exclusive: readers go on, while close() and zap_all() wait for the write.
  std::shared_lock lock(mu_);
  check_open();
  if (tid <= max_tid_) {
    throw StorageTransactionError("FileStorage " + path_ + ": tid " + tid.hex() +
                                  " is not after the file's last tid " + max_tid_.hex());
  }
  // end_ changes only under the commit lock, which the caller holds.
  staged.tpos = end_;
  const std::string bytes =
      encode_transaction(staged.tpos, tid, 'c', meta, records, index_, staged.positions);
  file_->append(staged.tpos, bytes, false);  // truncates back itself when it fails
  staged.size = bytes.size();
  return staged;
}

void FileStorage::unstage(const Staged& staged) noexcept {
  std::shared_lock lock(mu_);
  if (closed_ || !file_) return;  // a writable open cuts the 'c' tail
  try {
    file_->truncate(staged.tpos);
  } catch (...) {
    // Left with status 'c' past end_: no reader here goes there, and the next writable
    // open cuts it off (copied to a .trN file).
  }
}

void FileStorage::publish(const Staged& staged, const std::vector<PendingRecord>& records,
                          const std::function<void(Tid)>& on_tid) {
  const Tid tid = staged.tid;
  const std::vector<uint64_t>& positions = staged.positions;
  const uint64_t tpos = staged.tpos;
  {
    std::shared_lock lock(mu_);
    check_open();
    try {
      file_->write_byte(tpos + kTxnStatusOffset, staged.status, options_.fsync_each_commit);
    } catch (...) {
      try {
        file_->truncate(tpos);
      } catch (...) {
        // As in unstage: a 'c' transaction nobody reads, cut at the next writable open.
      }
      throw;
    }
  }
  std::exception_ptr callback_error;
  if (on_tid) {
    try {
      on_tid(tid);
    } catch (...) {
      callback_error = std::current_exception();  // the commit is durable: publish it anyway
    }
  }
  {
    std::unique_lock lock(mu_);
    // Closed meanwhile (by another thread's last handle): the transaction is in the file,
    // which close() synced, and nothing reads this object any more.
    if (closed_) {
      if (callback_error) std::rethrow_exception(callback_error);
      return;
    }
    Commit c{tid, {}};
    c.oids.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      index_.set(records[i].oid, positions[i], !records[i].data);
      c.oids.push_back(records[i].oid);
      // 0 means none left: after the largest OID, which no later store undoes.
      const uint64_t after = records[i].oid.value() + 1;
      if (next_oid_ != 0 && (after == 0 || after > next_oid_)) next_oid_ = after;
    }
    end_ = tpos + staged.size;
    last_tid_ = max_tid_ = tid;
    ++transactions_;
    map_ = FileMap::map(file_->fd(), path_, end_);
    log_.push_back(std::move(c));
    while (log_.size() > kLogLimit) {
      log_floor_ = log_.front().tid;
      log_.pop_front();
    }
  }
  commits_.fetch_add(1, std::memory_order_relaxed);
  if (callback_error) std::rethrow_exception(callback_error);
}

void FileStorage::zap_all() {
  require_writable();
  lock_commit();
  try {
    std::unique_lock lock(mu_);
    check_open();
    // A new file rather than a truncation: iterators and instances still reading the old
    // one map its bytes, and would fault on a file cut short under them.
    file_->replace_with(magic_);
    map_ = FileMap::map(file_->fd(), path_, kMagicSize);
    index_.clear();
    end_ = kMagicSize;
    last_tid_ = max_tid_ = log_floor_ = Tid(0);
    transactions_ = 0;
    std::error_code ec;
    std::filesystem::remove(conversion_note_path(), ec);  // nothing of that copy is left
    next_oid_ = 1;
    log_.clear();
    ++generation_;
  } catch (...) {
    unlock_commit();
    throw;
  }
  unlock_commit();
}

bool FileStorage::closed() const {
  std::shared_lock lock(mu_);
  return closed_;
}

void FileStorage::close() {
  std::unique_lock lock(mu_);
  if (closed_) return;
  closed_ = true;
  map_.reset();
  if (file_) {
    std::unique_ptr<AppendFile> f = std::move(file_);
    f->sync();  // the destructor closes the file and releases the lock
  }
}

}  // namespace relstore::fs
