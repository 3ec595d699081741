// Storage over a database adapter: the shared part of every SQL backend.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "backend/adapter.h"
#include "relstore/blob_dir.h"
#include "relstore/clock.h"
#include "relstore/storage.h"
#include "storage/blob_cache_limit.h"
#include "storage/state_cache.h"

namespace relstore {

// Created as a shared_ptr: instances keep it alive, so an instance outliving the handle
// returned by open_storage stays valid.
class DbStorage : public Storage, public std::enable_shared_from_this<DbStorage> {
 public:
  DbStorage(std::unique_ptr<backend::Adapter> adapter, StorageOptions options);
  ~DbStorage() override;

  std::unique_ptr<StorageInstance> new_instance() override;
  std::unique_ptr<StorageInstance> historical_instance(Tid before) override;
  void set_conflict_resolver(ConflictResolver resolver) override;

  std::string name() const override { return adapter_->describe(); }
  std::string sort_key() const override { return adapter_->describe(); }
  bool is_read_only() const override { return options_.read_only; }
  bool keep_history() const override { return adapter_->keep_history(); }
  uint64_t len() override { return adapter_->info().objects; }
  uint64_t size() override { return adapter_->info().size_bytes; }
  StorageInfo info() override { return adapter_->info(); }
  std::string identity() override { return adapter_->identity(); }
  StorageStats stats() const override;
  void zap_all() override;
  bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) override;
  PackResult pack(const PackOptions& options) override;  // pack.cc
  // The blob directory of the options; StorageError saying how to give one when there is
  // none and `what` needs it.
  const BlobDir& blob_dir(const std::string& what) const;
  bool has_blob_dir() const { return blob_dir_.has_value(); }
  // The cache's bookkeeping for blob_cache_size (storage/blob_cache_limit.h): a file just
  // written into the blob directory, and one just served from it. Never throw.
  void blob_cached(const std::string& path) noexcept;
  void blob_served(const std::string& path) noexcept;
  void close() override;

  // --- for instances ---
  backend::Adapter& adapter() { return *adapter_; }
  const StorageOptions& options() const { return options_; }
  StateCache& cache() { return cache_; }
  ConflictResolver resolver() const;
  double now() const { return options_.clock->now(); }

  std::unique_ptr<backend::StoreConnection> borrow_store();
  void give_back(std::unique_ptr<backend::StoreConnection> conn);

  Oid new_oid();
  // Moves the OID allocator past `oid` if it may not be already.
  void note_stored_oid(Oid oid, backend::StoreConnection& conn);

  // Held exclusively while a commit becomes visible and its callback runs; shared while
  // an instance starts a snapshot, so no instance sees a commit before its callback ran.
  // The thread running a finish callback holds it already: what that callback does with
  // this storage (read, even commit) takes it no second time, rather than deadlock.
  std::shared_lock<std::shared_mutex> see_commits() {
    if (CallbackScope::running(this)) return {};
    return std::shared_lock(visibility_);
  }
  std::unique_lock<std::shared_mutex> show_commit() {
    if (CallbackScope::running(this)) return {};
    return std::unique_lock(visibility_);
  }
  // Marks this thread as running a finish callback of this storage, for its lifetime.
  // Scopes nest (a callback that commits to another storage, whose callback reads this
  // one): each thread keeps a chain of them.
  class CallbackScope {
   public:
    explicit CallbackScope(const DbStorage& s) : storage_(&s), outer_(innermost_) {
      innermost_ = this;
    }
    ~CallbackScope() { innermost_ = outer_; }
    CallbackScope(const CallbackScope&) = delete;
    CallbackScope& operator=(const CallbackScope&) = delete;
    // Whether this thread runs a finish callback of `s`.
    static bool running(const DbStorage* s) {
      for (const CallbackScope* c = innermost_; c; c = c->outer_) {
        if (c->storage_ == s) return true;
      }
      return false;
    }

   private:
    const DbStorage* storage_;
    const CallbackScope* outer_;
    static thread_local const CallbackScope* innermost_;
  };

  // The JSON mirror's mode as last seen by a poll (dialects that read it at vote know it
  // exactly; this is for the others).
  bool mirror_in_commit() const { return mirror_in_commit_.load(std::memory_order_relaxed); }
  void note_mirror_mode(MirrorMode mode) {
    mirror_in_commit_.store(mode == MirrorMode::in_commit, std::memory_order_relaxed);
  }

  // Every poll's mark: when it differs from the one the state cache was filled under (a
  // zap, a history replaced, history-free deletions), the cache starts a new generation,
  // even for an instance whose first poll this is and which has nothing to compare with.
  void note_poll_mark(std::optional<Tid> mark);

  void count_hit() { hits_.fetch_add(1, std::memory_order_relaxed); }
  void count_miss() { misses_.fetch_add(1, std::memory_order_relaxed); }
  void count_commit() { commits_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::unique_ptr<backend::Adapter> adapter_;
  StorageOptions options_;
  StateCache cache_;
  std::optional<BlobDir> blob_dir_;
  std::unique_ptr<BlobCacheLimit> blob_limit_;  // with blob_cache_size
  std::shared_mutex visibility_;

  mutable std::mutex resolver_mu_;
  ConflictResolver resolver_;

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<backend::StoreConnection>> pool_;
  // Set under pool_mu_, so that no connection is pooled after close(); read anywhere.
  std::atomic<bool> closed_{false};
  void check_open() const;

  std::mutex oid_mu_;
  std::vector<Oid> free_oids_;  // allocated and not handed out yet, descending
  uint64_t high_water_ = 0;     // the allocator is known to be past this

  std::atomic<uint64_t> hits_{0}, misses_{0}, commits_{0};
  std::atomic<bool> mirror_in_commit_{false};

  std::mutex mark_mu_;
  std::optional<Tid> cache_mark_;  // the poll mark the cache's content was read under
};

}  // namespace relstore
