#include "adapters/sqlite/adapter.h"

#include <filesystem>

#include "adapters/sqlite/db_iterator.h"
#include "adapters/sqlite/load_connection.h"
#include "adapters/sqlite/oid_allocator.h"
#include "adapters/sqlite/queries.h"
#include "adapters/sqlite/schema_installer.h"
#include "adapters/sqlite/store_connection.h"
#include "backend/registry.h"
#include "relstore/errors.h"

namespace relstore::sqlite {

std::unique_ptr<Db> open_main(const Location& loc, Role role) {
  const bool writable = role == Role::store && !loc.read_only;
  auto db = writable ? std::make_unique<Db>(loc.main_path, SQLITE_OPEN_READWRITE)
                     : open_for_reading(loc.main_path);
  db->set_busy_timeout(loc.lock_timeout);
  db->exec("PRAGMA foreign_keys = ON");
  if (writable) {
    db->exec("PRAGMA synchronous = NORMAL");
  } else {
    db->exec("PRAGMA query_only = ON");
  }
  return db;
}

SqliteAdapter::SqliteAdapter(const StorageUri& uri, const StorageOptions& options) {
  if (!options.driver.empty()) {
    throw ConfigError("unknown option '" + options.driver.begin()->first +
                      "' for a sqlite: URI (known: history, read_only, cache_mb, "
                      "commit_lock_timeout, create)");
  }
  namespace fs = std::filesystem;
  loc_.dir = uri.database;
  loc_.main_path = (fs::path(loc_.dir) / "main.sqlite3").string();
  loc_.oids_path = (fs::path(loc_.dir) / "oids.sqlite3").string();
  loc_.read_only = options.read_only;
  loc_.lock_timeout = options.commit_lock_timeout;
  describe_ = uri.redacted();
  loc_.keep_history = install_schema(loc_, options);
}

std::unique_ptr<backend::LoadConnection> SqliteAdapter::open_load() {
  return std::make_unique<SqliteLoadConnection>(loc_, *this);
}

std::unique_ptr<backend::StoreConnection> SqliteAdapter::open_store() {
  if (loc_.read_only) throw ReadOnlyError();
  return std::make_unique<SqliteStoreConnection>(loc_, *this);
}

std::unique_ptr<TransactionIterator> SqliteAdapter::open_iterator(std::optional<Tid> start,
                                                                  std::optional<Tid> stop) {
  return std::make_unique<SqliteIterator>(loc_, start, stop);
}

StorageInfo SqliteAdapter::info() {
  auto db = open_main(loc_, Role::inspect);
  const Queries& q = queries(loc_.keep_history);
  db->exec("BEGIN");
  StorageInfo out;
  out.backend = "sqlite";
  out.keep_history = loc_.keep_history;
  out.objects = static_cast<uint64_t>(db->query_int(q.count_objects));
  out.transactions = static_cast<uint64_t>(db->query_int(q.count_transactions));
  out.size_bytes = static_cast<uint64_t>(db->query_int(kStateBytes));
  out.last_tid = Tid::from_sql(db->query_int(q.last_tid));
  out.schema_version = schema_version(*db);
  db->exec("COMMIT");
  return out;
}

void SqliteAdapter::zap_all() {
  if (loc_.read_only) throw ReadOnlyError();
  auto db = open_main(loc_, Role::store);
  db->exec("BEGIN IMMEDIATE");
  try {
    db->exec(loc_.keep_history
                 ? "DELETE FROM current_object; DELETE FROM blob_chunk; DELETE FROM object_state;"
                   "DELETE FROM \"transaction\" WHERE tid > 0; DELETE FROM object_ref;"
                   "DELETE FROM object_refs_added; DELETE FROM pack_object;"
                   "DELETE FROM pack_state; DELETE FROM pack_state_tid;"
                 : "DELETE FROM blob_chunk; DELETE FROM object_state; DELETE FROM object_ref;"
                   "DELETE FROM object_refs_added; DELETE FROM pack_object;");
    db->exec("COMMIT");
  } catch (...) {
    db->exec("ROLLBACK");
    throw;
  }
  OidAllocator(loc_).reset();
}

}  // namespace relstore::sqlite

namespace relstore::backend {

std::unique_ptr<Adapter> make_sqlite_adapter(const StorageUri& uri, const StorageOptions& options) {
  return std::make_unique<sqlite::SqliteAdapter>(uri, options);
}

}  // namespace relstore::backend
