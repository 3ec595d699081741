// The MySQL/MariaDB dialect's composition root (design.md §2).
#pragma once

#include <memory>
#include <string>

#include "adapters/mysql/driver.h"
#include "adapters/mysql/snapshot_closer.h"
#include "backend/adapter.h"

namespace relstore::mysql {

class BulkLoader;
class MysqlStoreConnection;
namespace json_mirror {
class Mirror;
}

// What the server is: a few statements differ between MariaDB and MySQL 8.
struct ServerInfo {
  std::string version;  // VERSION()
  bool mariadb = false;
  int major = 0;
  int minor = 0;
  int64_t max_allowed_packet = 16 << 20;
  std::string disabled_engines;  // MySQL's @@disabled_storage_engines (MariaDB has none)
  // The clause of a SELECT that takes shared row locks without waiting, and the session
  // lock wait (seconds) to set around it.
  std::string share_lock() const;
  int share_wait() const;
  // The engine of the store connections' temporary tables.
  std::string temp_engine() const;
};

// Settings shared by every connection to one database.
struct Settings {
  ConnectParams connect;
  bool keep_history = true;
  bool read_only = false;
  double lock_timeout = 30.0;  // seconds, for innodb_lock_wait_timeout
  // History-free database with relstore_hf_deletion (src/backend/deletion_mark.h).
  bool has_deletion_mark = false;
  bool has_conversion_note = false;  // relstore_conversion (migration 0004)
  ServerInfo server;
};

// load: the instance snapshot (REPEATABLE READ, READ ONLY); store: two-phase commit and
// OID allocation (READ COMMITTED, autocommit off, temp tables); inspect: iterators and
// counts; admin: schema and procedure installation (autocommit, utf8mb4 client settings).
enum class Role { load, store, inspect, admin };

// Opens a connection with the session settings of `role` (one round trip after the
// handshake). Round trips are counted on `counter` when given.
std::unique_ptr<Connection> open_connection(const Settings& s, Role role,
                                            backend::Adapter* counter);

class MysqlAdapter : public backend::Adapter {
 public:
  MysqlAdapter(const StorageUri& uri, const StorageOptions& options);
  ~MysqlAdapter() override;

  std::string dialect() const override { return "mysql"; }
  bool keep_history() const override { return settings_.keep_history; }
  std::string describe() const override { return settings_.connect.describe; }

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

  // Bulk loading (convert): multi-row INSERTs in batches (bulk_loader.h).
  bool supports_bulk() const override { return true; }
  void bulk_apply_current(std::span<const backend::BulkRecord> records,
                          std::optional<Tid> expected_last) override;
  void bulk_restore(std::span<const TransactionRecord> transactions,
                    std::optional<Tid> expected_last) override;
  void bulk_begin() override;
  void bulk_finish() override;
  bool wait_for_bulk_loads(const std::atomic<bool>* stop) override;

  // The JSON mirror (json_mirror.h).
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
  Settings settings_;
  // Outlives every load connection: they belong to instances, which keep the storage
  // and so this adapter alive.
  SnapshotCloser closer_;
  std::unique_ptr<MysqlStoreConnection> bulk_;  // the connection history-free bulk loads reuse
  std::unique_ptr<BulkLoader> loader_;          // history-preserving bulk loads
  std::unique_ptr<json_mirror::Mirror> mirror_;
};

// Connection parameters from a mysql:// URI and its driver options. Throws ConfigError
// for an option relstore does not know.
ConnectParams connect_params(const StorageUri& uri, const StorageOptions& options);

}  // namespace relstore::mysql
