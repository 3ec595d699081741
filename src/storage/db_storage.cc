#include "storage/db_storage.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "relstore/errors.h"
#include "storage/db_instance.h"

namespace relstore {

thread_local const DbStorage::CallbackScope* DbStorage::CallbackScope::innermost_ = nullptr;

DbStorage::DbStorage(std::unique_ptr<backend::Adapter> adapter, StorageOptions options)
    : adapter_(std::move(adapter)),
      options_(std::move(options)),
      cache_(options_.cache_mb * 1024 * 1024) {
  if (!options_.clock) options_.clock = system_clock();
  if (!options_.blob_dir.empty()) blob_dir_.emplace(BlobDir::create(options_.blob_dir));
  if (blob_dir_ && options_.blob_cache_size) {
    blob_limit_ = std::make_unique<BlobCacheLimit>(*blob_dir_, *options_.blob_cache_size,
                                                   options_.blob_cache_size_check);
  }
}

void DbStorage::blob_cached(const std::string& path) noexcept {
  if (!blob_limit_) return;
  std::error_code ec;
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (!ec) blob_limit_->written(bytes);
}

void DbStorage::blob_served(const std::string& path) noexcept {
  if (blob_limit_) BlobCacheLimit::touch(path);
}

const BlobDir& DbStorage::blob_dir(const std::string& what) const {
  if (!blob_dir_) {
    throw StorageError(adapter_->describe() + ": " + what +
                       " needs a blob directory: give the option blob_dir=PATH (RelStorage's "
                       "blob-dir), where the blobs the database holds are cached as files");
  }
  return *blob_dir_;
}

DbStorage::~DbStorage() = default;

std::unique_ptr<StorageInstance> DbStorage::new_instance() {
  return std::make_unique<DbInstance>(shared_from_this(), std::nullopt);
}

std::unique_ptr<StorageInstance> DbStorage::historical_instance(Tid before) {
  return std::make_unique<DbInstance>(shared_from_this(), before);
}

void DbStorage::set_conflict_resolver(ConflictResolver resolver) {
  std::lock_guard lock(resolver_mu_);
  resolver_ = std::move(resolver);
}

ConflictResolver DbStorage::resolver() const {
  std::lock_guard lock(resolver_mu_);
  return resolver_;
}

StorageStats DbStorage::stats() const {
  StorageStats s;
  s.round_trips = adapter_->round_trips();
  s.commits = commits_.load(std::memory_order_relaxed);
  s.cache_hits = hits_.load(std::memory_order_relaxed);
  s.cache_misses = misses_.load(std::memory_order_relaxed);
  return s;
}

std::unique_ptr<backend::StoreConnection> DbStorage::borrow_store() {
  {
    std::lock_guard lock(pool_mu_);
    check_open();
    if (!pool_.empty()) {
      auto conn = std::move(pool_.back());
      pool_.pop_back();
      return conn;
    }
  }
  return adapter_->open_store();
}

void DbStorage::give_back(std::unique_ptr<backend::StoreConnection> conn) {
  if (!conn || !conn->healthy()) return;  // a broken connection is dropped; the next one is new
  std::lock_guard lock(pool_mu_);
  if (closed_) return;  // a commit that was running at close(): its session ends here
  pool_.push_back(std::move(conn));
}

void DbStorage::note_poll_mark(std::optional<Tid> mark) {
  if (!mark) return;
  std::lock_guard lock(mark_mu_);
  if (cache_mark_ && *cache_mark_ != *mark) cache_.clear();
  cache_mark_ = mark;
}

Oid DbStorage::new_oid() {
  if (options_.read_only) throw ReadOnlyError();
  check_open();
  std::lock_guard lock(oid_mu_);
  if (free_oids_.empty()) {
    auto conn = borrow_store();
    std::vector<Oid> fresh = conn->allocate_oids();
    give_back(std::move(conn));
    if (fresh.empty()) throw StorageError("the OID allocator returned no OIDs");
    for (Oid oid : fresh) high_water_ = std::max(high_water_, oid.value());
    // Hand them out smallest first: keep them descending and pop from the back.
    std::sort(fresh.begin(), fresh.end(), std::greater<>());
    if (fresh.back().is_zero()) fresh.pop_back();  // OID 0 is the root, never allocated
    free_oids_ = std::move(fresh);
  }
  const Oid oid = free_oids_.back();
  free_oids_.pop_back();
  return oid;
}

void DbStorage::note_stored_oid(Oid oid, backend::StoreConnection& conn) {
  std::lock_guard lock(oid_mu_);
  // OIDs this process holds for new_oid up to `oid` must not be handed out now: one of
  // them is this object, and new_oid promises OIDs above every stored one (the pool is
  // descending, smallest at the back).
  while (!free_oids_.empty() && free_oids_.back() <= oid) free_oids_.pop_back();
  if (oid.value() <= high_water_) return;
  // Move the allocator well past `oid`, so that restoring ascending OIDs (convert) costs
  // one allocator write (a durable one: an fsync or a round trip) per 16384 OIDs rather
  // than one per transaction. Skipped OIDs are never handed out, which is harmless.
  uint64_t target = (oid.value() / 16384 + 1) * 16384;
  if (target < oid.value()) target = oid.value();  // wrapped: the last block of the range
  conn.set_min_oid(Oid(target));
  high_water_ = target;
}

void DbStorage::zap_all() {
  if (options_.read_only) throw ReadOnlyError();
  {
    std::lock_guard lock(pool_mu_);
    pool_.clear();
  }
  adapter_->zap_all();
  cache_.clear();
  std::lock_guard lock(oid_mu_);
  free_oids_.clear();
  high_water_ = 0;
}

bool DbStorage::set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) {
  if (options_.read_only) throw ReadOnlyError();
  return adapter_->set_unfinished_conversion(note);
}

void DbStorage::close() {
  std::lock_guard lock(pool_mu_);
  closed_ = true;
  pool_.clear();
}

void DbStorage::check_open() const {
  if (closed_) throw StorageError(adapter_->describe() + " is closed");
}

}  // namespace relstore
