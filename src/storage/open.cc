#include <filesystem>

#include "backend/registry.h"
#include "option_values.h"
#include "relstore/errors.h"
#include "relstore/filestorage.h"
#include "relstore/storage.h"
#include "storage/db_storage.h"
#include "storage/file_uri.h"

namespace relstore {

std::unique_ptr<backend::Adapter> backend::open_adapter(const StorageUri& uri,
                                                        const StorageOptions& options) {
  switch (uri.scheme) {
    case Scheme::sqlite:
      return backend::make_sqlite_adapter(uri, options);
    case Scheme::postgresql:
#ifdef RELSTORE_HAVE_POSTGRESQL
      return backend::make_postgresql_adapter(uri, options);
#else
      throw ConfigError(
          "this relstore was built without PostgreSQL support "
          "(configure with -DRELSTORE_WITH_POSTGRESQL=ON)");
#endif
    case Scheme::mysql:
#ifdef RELSTORE_HAVE_MYSQL
      return backend::make_mysql_adapter(uri, options);
#else
      throw ConfigError(
          "this relstore was built without MySQL support "
          "(configure with -DRELSTORE_WITH_MYSQL=ON)");
#endif
    case Scheme::file:
      break;
  }
  throw ConfigError("internal: file: URIs do not use a database adapter");
}

void backend::check_driver_options(const StorageUri& uri) {
#ifdef RELSTORE_HAVE_POSTGRESQL
  if (uri.scheme == Scheme::postgresql) backend::check_postgresql_options(uri);
#else
  (void)uri;
#endif
}

bool driver_flag(const StorageOptions& options, const std::string& key, bool fallback) {
  const auto it = options.driver.find(key);
  return it == options.driver.end() ? fallback : parse_bool(key, it->second);
}

void check_file_uri_options(const StorageOptions& options) {
  if (options.history == HistoryMode::free) {
    throw ConfigError(
        "a FileStorage (file: URI) always keeps history; history=free does not apply");
  }
  if (!options.blob_dir.empty()) {
    throw ConfigError(
        "option blob_dir does not apply to a file: URI: relstore reads a Data.fs's blobs "
        "only when converting it (relstore convert --source-blob-dir)");
  }
  for (const auto& [key, value] : options.driver) {
    if (key != "write" && key != "fsync") {
      throw ConfigError("option " + key +
                        " does not apply to a file: URI (it takes read_only, write, fsync and "
                        "commit_lock_timeout)");
    }
  }
}

namespace {

// file: URIs open read-only unless writing is asked for (`?write=1`), or the file does
// not exist yet and may be created: a reader takes no lock, so it can read a file that a
// running ZODB holds, while a writer locks it. `?fsync=0` syncs only on close (convert).
std::unique_ptr<Storage> open_file(const StorageUri& uri, const StorageOptions& options) {
  check_file_uri_options(options);
  FileStorageOptions fo;
  std::error_code ec;
  const bool missing = !std::filesystem::exists(uri.database, ec);
  fo.read_only =
      options.read_only || !(driver_flag(options, "write", false) || (missing && options.create));
  fo.create = options.create;
  fo.fsync_each_commit = driver_flag(options, "fsync", true);
  fo.commit_lock_timeout = options.commit_lock_timeout;
  fo.clock = options.clock;
  return open_file_storage(uri.database, fo);
}

// The handle open_storage returns; instances share ownership of the storage behind it.
class StorageHandle : public Storage {
 public:
  explicit StorageHandle(std::shared_ptr<DbStorage> impl) : impl_(std::move(impl)) {}
  std::unique_ptr<StorageInstance> new_instance() override { return impl_->new_instance(); }
  std::unique_ptr<StorageInstance> historical_instance(Tid before) override {
    return impl_->historical_instance(before);
  }
  void set_conflict_resolver(ConflictResolver r) override {
    impl_->set_conflict_resolver(std::move(r));
  }
  std::string name() const override { return impl_->name(); }
  std::string sort_key() const override { return impl_->sort_key(); }
  bool is_read_only() const override { return impl_->is_read_only(); }
  bool keep_history() const override { return impl_->keep_history(); }
  uint64_t len() override { return impl_->len(); }
  uint64_t size() override { return impl_->size(); }
  StorageInfo info() override { return impl_->info(); }
  std::string identity() override { return impl_->identity(); }
  StorageStats stats() const override { return impl_->stats(); }
  void zap_all() override { impl_->zap_all(); }
  bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) override {
    return impl_->set_unfinished_conversion(note);
  }
  PackResult pack(const PackOptions& options) override { return impl_->pack(options); }
  void close() override { impl_->close(); }

 private:
  std::shared_ptr<DbStorage> impl_;
};

}  // namespace

std::unique_ptr<Storage> open_storage(const StorageUri& uri, const StorageOptions& options) {
  if (uri.scheme == Scheme::file) return open_file(uri, options);
  StorageOptions effective = options;
  // SQLite's immutable=1 reads a copy that nothing may change, so nothing writes to it.
  if (uri.scheme == Scheme::sqlite && driver_flag(options, "immutable", false)) {
    effective.read_only = true;
  }
  return std::make_unique<StorageHandle>(
      std::make_shared<DbStorage>(backend::open_adapter(uri, effective), effective));
}

std::unique_ptr<Storage> open_storage(std::string_view uri) {
  const StorageUri parsed = StorageUri::parse(uri);
  return open_storage(parsed, parsed.options());
}

}  // namespace relstore
