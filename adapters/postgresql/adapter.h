// The PostgreSQL dialect's composition root (design.md §2).
#pragma once

#include <memory>
#include <string>

#include "adapters/postgresql/driver.h"
#include "backend/adapter.h"

namespace relstore::postgresql {

namespace json_mirror {
class Mirror;
}
class BulkLoader;

// What every connection to one database shares.
struct Location {
  ConnectSpec connect;           // libpq parameters, without application_name and options
  std::string application_name;  // the URI's own, if it gave one
  std::string options;           // the URI's libpq `options` (server settings), if any
  bool keep_history = true;
  bool json_mirror = false;      // the mirror's tables and functions are installed
  bool deletion_mark = false;    // history-free database with relstore_hf_deletion
  bool conversion_note = false;  // relstore_conversion is there
  bool read_only = false;
  double lock_timeout = 30.0;
};

// What a connection is for; pg_stat_activity shows it as application_name "relstore <role>".
enum class Role { load, store, admin, iterator, listen };

// Opens a connection for `role`. Store connections get lock_timeout = the commit lock
// timeout; every round trip is reported to `counter` (may be null).
std::unique_ptr<Conn> open_conn(const Location& loc, Role role, backend::Adapter* counter);

// Builds the connection parameters from a postgresql:// URI and the options relstore does
// not know itself (passed on to libpq). Throws ConfigError for a parameter libpq rejects.
Location location_of(const StorageUri& uri, const StorageOptions& options);

class PostgresqlAdapter : public backend::Adapter {
 public:
  PostgresqlAdapter(const StorageUri& uri, const StorageOptions& options);

  std::string dialect() const override { return "postgresql"; }
  bool keep_history() const override { return loc_.keep_history; }
  std::string describe() const override { return loc_.connect.describe; }

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
  std::vector<int> applied_migrations() override;
  void apply_migration(const Migration& migration) override;

  bool supports_bulk() const override { return !loc_.read_only; }
  void bulk_apply_current(std::span<const backend::BulkRecord> records,
                          std::optional<Tid> expected_last) override;
  void bulk_restore(std::span<const TransactionRecord> transactions,
                    std::optional<Tid> expected_last) override;
  void bulk_begin() override;
  void bulk_finish() override;
  bool wait_for_bulk_loads(const std::atomic<bool>* stop) override;

  DecodeOptions mirror_decode_options() const override;
  backend::MirrorState mirror_state() override;
  void set_mirror_mode(MirrorMode mode) override;
  backend::MirrorChanges mirror_changes(Tid since, size_t limit) override;
  std::vector<Oid> mirror_orphans(size_t limit) override;
  void mirror_apply(const mirror::Batch& batch, std::optional<mirror::Advance> advance) override;
  void mirror_clear() override;
  void mirror_settle() override;
  void mirror_wait(double seconds) override;

  ~PostgresqlAdapter() override;

 private:
  Location loc_;
  std::unique_ptr<json_mirror::Mirror> mirror_;
  std::unique_ptr<BulkLoader> bulk_;
};

}  // namespace relstore::postgresql
