// The SQLite dialect's composition root (design.md §2).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sqlite/driver.h"
#include "backend/adapter.h"

namespace relstore::sqlite {

// Paths and settings shared by every connection to one data directory.
struct Location {
  std::string dir;
  std::string main_path;  // dir/main.sqlite3
  std::string oids_path;  // dir/oids.sqlite3
  bool keep_history = true;
  bool read_only = false;
  bool immutable = false;  // ?immutable=1: read a copy nothing changes (so read_only)
  double lock_timeout = 30.0;
  // User pragmas from `?pragma.NAME=VALUE` (zodbconvert's <pragmas>), applied to every
  // connection after relstore's own.
  std::vector<std::pair<std::string, std::string>> pragmas;
};

enum class Role { load, store, inspect };

// Opens main.sqlite3 with the pragmas of `role` (WAL and foreign keys always; query_only
// for load and inspect connections).
std::unique_ptr<Db> open_main(const Location& loc, Role role);

class BulkLoader;

class SqliteAdapter : public backend::Adapter {
 public:
  SqliteAdapter(const StorageUri& uri, const StorageOptions& options);
  ~SqliteAdapter() override;

  std::string dialect() const override { return "sqlite"; }
  bool keep_history() const override { return loc_.keep_history; }
  std::string describe() const override { return describe_; }

  std::unique_ptr<backend::LoadConnection> open_load() override;
  std::unique_ptr<backend::StoreConnection> open_store() override;
  std::unique_ptr<TransactionIterator> open_iterator(std::optional<Tid> start,
                                                     std::optional<Tid> stop) override;
  StorageInfo info() override;
  backend::CurrentFaults current_faults() override;
  std::string identity() override;
  void zap_all() override;
  bool set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) override;
  std::unique_ptr<backend::PackSession> open_pack() override;
  bool supports_bulk() const override { return !loc_.read_only; }
  void bulk_apply_current(std::span<const backend::BulkRecord> records,
                          std::optional<Tid> expected_last) override;
  void bulk_restore(std::span<const TransactionRecord> transactions,
                    std::optional<Tid> expected_last) override;
  void bulk_begin() override { bulk(); }
  void bulk_finish() override;
  backend::MirrorState mirror_state() override;
  void set_mirror_mode(MirrorMode mode) override;
  backend::MirrorChanges mirror_changes(Tid since, size_t limit) override;
  std::vector<Oid> mirror_orphans(size_t limit) override;
  void mirror_apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance) override;
  void mirror_clear() override;
  void mirror_settle() override;
  std::vector<int> applied_migrations() override;
  void apply_migration(const Migration& migration) override;

 private:
  BulkLoader& bulk();
  Db& mirror_db();

  Location loc_;
  std::string describe_;
  std::unique_ptr<BulkLoader> bulk_;
  std::unique_ptr<Db> mirror_db_;  // the connection mirror maintenance uses
};

}  // namespace relstore::sqlite
