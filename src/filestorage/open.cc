// open_file_storage: the Storage handles of FileStorages, and the sharing of one writer
// per file within a process.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "filestorage/file_storage.h"
#include "paths.h"

namespace relstore {
namespace {

// Writable FileStorages open in this process, by canonical path. A second writer in the
// same process shares the first one (the lock file keeps out other processes), so
// several Storage handles on one file see each other's commits, as with the databases.
struct Shared {
  std::shared_ptr<fs::FileStorage> storage;
  size_t open_handles = 0;
  pid_t pid;  // a forked child must not use its parent's writer (nor its lock)
};
std::mutex registry_mu;
std::map<std::string, std::weak_ptr<Shared>>& registry() {
  static std::map<std::string, std::weak_ptr<Shared>> r;
  return r;
}

// What open_file_storage hands out: a Storage forwarding to a (possibly shared)
// FileStorage. close() closes the file when no other open handle uses it; dropping a
// handle without close() leaves the file open for the instances that still use it.
class FileStorageHandle : public Storage {
 public:
  FileStorageHandle(std::shared_ptr<Shared> shared, bool read_only, std::shared_ptr<Clock> clock)
      : shared_(std::move(shared)),
        impl_(shared_->storage),
        read_only_(read_only),
        clock_(std::move(clock)) {
    std::lock_guard lock(registry_mu);
    ++shared_->open_handles;
  }
  ~FileStorageHandle() override {
    std::lock_guard lock(registry_mu);
    if (!closed_) --shared_->open_handles;
  }
  std::unique_ptr<StorageInstance> new_instance() override {
    return impl_->new_instance(read_only_, clock_);
  }
  std::unique_ptr<StorageInstance> historical_instance(Tid before) override {
    return impl_->historical_instance(before);
  }
  void set_conflict_resolver(ConflictResolver r) override {
    impl_->set_conflict_resolver(std::move(r));
  }
  std::string name() const override { return impl_->name(); }
  std::string sort_key() const override { return impl_->sort_key(); }
  std::string identity() override { return impl_->identity(); }
  bool is_read_only() const override { return read_only_ || impl_->is_read_only(); }
  bool keep_history() const override { return impl_->keep_history(); }
  uint64_t len() override { return impl_->len(); }
  uint64_t size() override { return impl_->size(); }
  StorageInfo info() override { return impl_->info(); }
  StorageStats stats() const override { return impl_->stats(); }
  void zap_all() override {
    if (read_only_)
      throw ReadOnlyError("this handle on FileStorage " + impl_->name() + " is read-only");
    impl_->zap_all();
  }
  bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) override {
    if (read_only_)
      throw ReadOnlyError("this handle on FileStorage " + impl_->name() + " is read-only");
    return impl_->set_unfinished_conversion(note);
  }
  void close() override {
    bool last = false;
    {
      std::lock_guard lock(registry_mu);
      if (closed_) return;
      closed_ = true;
      last = --shared_->open_handles == 0;
    }
    if (last) impl_->close();
  }

 private:
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<fs::FileStorage> impl_;
  bool read_only_;
  std::shared_ptr<Clock> clock_;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<Storage> open_file_storage(const std::string& path,
                                           const FileStorageOptions& options) {
  const std::string key = canonical_path(path);
  std::unique_lock lock(registry_mu);
  auto& slot = registry()[key];
  std::shared_ptr<Shared> shared = slot.lock();
  if (shared && (shared->pid != getpid() || shared->storage->closed())) shared.reset();
  if (!shared) {
    auto storage = std::make_shared<fs::FileStorage>(path, options);
    shared = std::make_shared<Shared>(Shared{std::move(storage), 0, getpid()});
    // Only writers are shared: a read-only storage is a snapshot of the file at opening.
    if (!options.read_only) slot = shared;
  }
  lock.unlock();
  return std::make_unique<FileStorageHandle>(std::move(shared), options.read_only, options.clock);
}

}  // namespace relstore
