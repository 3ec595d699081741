#include "adapters/mysql/adapter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "adapters/mysql/bulk_loader.h"
#include "adapters/mysql/db_iterator.h"
#include "adapters/mysql/json_mirror.h"
#include "adapters/mysql/load_connection.h"
#include "adapters/mysql/oid_allocator.h"
#include "adapters/mysql/pack_session.h"
#include "adapters/mysql/queries.h"
#include "adapters/mysql/schema_installer.h"
#include "adapters/mysql/store_connection.h"
#include "backend/registry.h"
#include "embedded_sql.h"
#include "relstore/clock.h"
#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

// Our own fixed sql_mode rather than the server's plus ANSI_QUOTES (RelStorage's way): a
// server default with NO_BACKSLASH_ESCAPES would break the escaped binary literals of the
// upload, and procedures store the mode they were created under.
constexpr const char* kSessionSettings =
    "SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
    "NO_ENGINE_SUBSTITUTION', time_zone = '+00:00', character_set_results = binary";

int lock_wait_seconds(double timeout) {
  // innodb_lock_wait_timeout is whole seconds, at least 1.
  return std::max(1, static_cast<int>(std::ceil(timeout)));
}

}  // namespace

// MySQL 8: FOR SHARE NOWAIT (failing with 3572). MariaDB accepts NOWAIT only outside
// stored procedures (error 1314 inside), but an innodb_lock_wait_timeout of 0 makes its
// LOCK IN SHARE MODE fail at once (with 1205); MySQL's minimum is 1.
std::string ServerInfo::share_lock() const {
  return mariadb ? "LOCK IN SHARE MODE" : "FOR SHARE NOWAIT";
}

int ServerInfo::share_wait() const { return mariadb ? 0 : 1; }

// MySQL has no Aria; both empty a table on DELETE, unlike InnoDB (temp_tables.sql). A
// MySQL that refuses MyISAM (InnoDB Cluster setups list it in disabled_storage_engines)
// gets InnoDB, which works, only slower on long-lived connections.
std::string ServerInfo::temp_engine() const {
  if (mariadb) return "Aria";
  std::string disabled = "," + disabled_engines + ",";
  for (char& c : disabled) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  disabled.erase(std::remove(disabled.begin(), disabled.end(), ' '), disabled.end());
  return disabled.find(",myisam,") == std::string::npos ? "MyISAM" : "InnoDB";
}

std::unique_ptr<Connection> open_connection(const Settings& s, Role role,
                                            backend::Adapter* counter) {
  std::string init = kSessionSettings;
  int statements = 1;
  switch (role) {
    case Role::load:
    case Role::inspect:
      init += "; SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY";
      statements += 1;
      break;
    case Role::store:
      init += "; SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";
      init += "; SET SESSION innodb_lock_wait_timeout = " +
              std::to_string(lock_wait_seconds(s.lock_timeout));
      // A server-wide statement time limit would cut a vote's or finish's wait for locks
      // short with an error that is neither a lock conflict nor retryable; the lock wait
      // above is the limit a commit keeps to.
      init += s.server.mariadb ? "; SET SESSION max_statement_time = 0"
                               : "; SET SESSION max_execution_time = 0";
      init += "; SET autocommit = 0; ";
      init += trim_statements(embedded_sql("sql/mysql/temp_tables.sql"));
      replace_all(init, "{TEMP_ENGINE}", s.server.temp_engine());
      statements += 8;
      break;
    case Role::admin:
      // Procedures keep the client character set and collation they were created with.
      init += "; SET NAMES utf8mb4 COLLATE utf8mb4_general_ci";
      statements += 1;
      break;
  }
  auto conn = std::make_unique<Connection>(s.connect, init, statements, counter);
  if (role == Role::store) {
    // The temporary tables ignore ROLLBACK (temp_tables.sql): a transaction that ends
    // without its finish must not leave rows for the next one.
    conn->also_on_rollback(
        "DELETE FROM temp_store; DELETE FROM temp_read_current; DELETE FROM temp_json; "
        "DELETE FROM temp_blob_chunk; SET @relstore_blobs = NULL",
        5);
  }
  return conn;
}

ConnectParams connect_params(const StorageUri& uri, const StorageOptions& options) {
  static const std::set<std::string> kKnown = {
      "unix_socket", "connect_timeout", "read_timeout", "write_timeout", "compress", "ssl_ca",
      "ssl_capath",  "ssl_cert",        "ssl_key",      "ssl_cipher",    "ssl_crl",  "ssl_verify"};
  ConnectParams p;
  for (const auto& [key, value] : options.driver) {
    if (!kKnown.count(key)) {
      std::string known;
      for (const auto& k : kKnown) known += (known.empty() ? "" : ", ") + k;
      throw ConfigError("unknown option '" + key +
                        "' for a mysql: URI (known besides "
                        "history, read_only, cache_mb, commit_lock_timeout, create: " +
                        known + ")");
    }
    if (key == "unix_socket") {
      p.unix_socket = value;
    } else {
      p.options[key] = value;
    }
  }
  if (!uri.host.empty()) p.host = uri.host;
  if (uri.port) p.port = *uri.port;
  p.user = uri.user;
  p.password = uri.password;
  p.database = uri.database;
  if (p.database.empty()) {
    throw ConfigError("malformed URI '" + uri.redacted() +
                      "': no database (mysql://user:password@host:port/database)");
  }
  p.describe = uri.redacted();
  return p;
}

MysqlAdapter::MysqlAdapter(const StorageUri& uri, const StorageOptions& options) {
  settings_.connect = connect_params(uri, options);
  settings_.read_only = options.read_only;
  settings_.lock_timeout = options.commit_lock_timeout;
  install_schema(settings_, options);
  mirror_ = std::make_unique<json_mirror::Mirror>(settings_, *this);
}

MysqlAdapter::~MysqlAdapter() = default;

std::unique_ptr<backend::LoadConnection> MysqlAdapter::open_load() {
  return std::make_unique<MysqlLoadConnection>(settings_, *this, closer_);
}

std::unique_ptr<backend::StoreConnection> MysqlAdapter::open_store() {
  if (settings_.read_only) throw ReadOnlyError();
  return std::make_unique<MysqlStoreConnection>(settings_, *this);
}

std::unique_ptr<TransactionIterator> MysqlAdapter::open_iterator(std::optional<Tid> start,
                                                                 std::optional<Tid> stop) {
  return std::make_unique<MysqlIterator>(settings_, start, stop);
}

StorageInfo MysqlAdapter::info() {
  auto conn = open_connection(settings_, Role::inspect, nullptr);
  const Queries& q = queries(settings_.keep_history);
  StorageInfo out;
  out.backend = "mysql";
  out.keep_history = settings_.keep_history;
  // One snapshot for every figure.
  std::string sql = "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; ";
  sql += q.count_objects;
  sql += "; ";
  sql += q.count_transactions;
  sql += "; ";
  sql += kStateBytes;
  sql += "; ";
  sql += q.last_tid;
  sql += "; ";
  sql += settings_.has_deletion_mark ? kDeletionMark : "SELECT 0";
  sql += "; ";
  sql += settings_.has_conversion_note ? "SELECT source, started_at FROM relstore_conversion"
                                       : "SELECT 1 FROM DUAL WHERE FALSE";
  sql += "; COMMIT";
  int64_t figures[5] = {0, 0, 0, 0, 0};
  int i = 0;
  conn->batch(
      sql, 8,
      [&](Rows& r) {
        if (i == 5) {
          if (r.next()) out.unfinished_conversion = UnfinishedConversion{r.bytes(0), r.bytes(1)};
        } else if (r.next() && !r.is_null(0) && i < 5) {
          figures[i] = r.int64(0);
        }
        ++i;
      },
      Context::read);
  out.objects = static_cast<uint64_t>(figures[0]);
  out.transactions = static_cast<uint64_t>(figures[1]);
  out.size_bytes = static_cast<uint64_t>(figures[2]);
  const Tid record = Tid::from_sql(figures[4]);  // 0 without the table ("SELECT 0")
  out.last_tid = backend::last_finished(Tid::from_sql(figures[3]), record);
  if (settings_.has_deletion_mark) out.last_deletion = backend::deletion_tid(record);
  out.schema_version = schema_version(*conn);
  return out;
}

backend::CurrentFaults MysqlAdapter::current_faults() {
  backend::CurrentFaults out;
  if (!settings_.keep_history) return out;
  auto conn = open_connection(settings_, Role::inspect, nullptr);
  // The callback sees result sets only: the one SELECT's.
  conn->batch(
      "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; " + backend::kCurrentFaultsSql +
          "; COMMIT",
      3,
      [&](Rows& r) {
        while (r.next()) {
          out.oids.push_back(Oid::from_sql(r.int64(0)));
          out.count = static_cast<uint64_t>(r.int64(1));
        }
      },
      Context::read);
  return out;
}

std::string MysqlAdapter::identity() {
  auto conn = open_connection(settings_, Role::inspect, nullptr);
  std::string out;
  conn->batch(
      kIdentity, 1,
      [&](Rows& r) {
        if (r.next()) out = r.bytes(0);
      },
      Context::read);
  return out;
}

void MysqlAdapter::zap_all() {
  if (settings_.read_only) throw ReadOnlyError();
  auto conn = open_connection(settings_, Role::store, this);
  // Not while a bulk load writes (the last batch of a killed conversion may still be
  // committing), and the other way round: a resume waits for a zap still running.
  take_bulk_lock(*conn, settings_.lock_timeout, true);
  // DELETE rather than TRUNCATE: TRUNCATE waits for the metadata lock every open snapshot
  // of another instance holds on these tables.
  std::string sql;
  int statements = 0;
  const bool mirror = json_mirror::has_tables(*conn);
  if (mirror) {
    // The mirror's lock first, as votes and follow/rebuild batches take it (shared, to
    // their commit): a batch that checked its states before the zap would otherwise put
    // rows of zapped objects back after it, rows no later batch replaces.
    sql = "SELECT id FROM relstore_json_mirror_lock WHERE id = 0 FOR UPDATE; ";
    statements = 1;
  }
  sql += settings_.keep_history
             ? "DELETE FROM current_object; DELETE FROM blob_chunk; DELETE FROM object_state; "
               "DELETE FROM \"transaction\" WHERE tid > 0; DELETE FROM object_ref; "
               "DELETE FROM object_refs_added; DELETE FROM pack_object; DELETE FROM pack_state; "
               "DELETE FROM pack_state_tid; INSERT IGNORE INTO commit_row_lock (tid) VALUES (0); "
             : "DELETE FROM blob_chunk; DELETE FROM object_state; DELETE FROM object_ref; "
               "DELETE FROM object_refs_added; DELETE FROM pack_object; "
               "INSERT IGNORE INTO commit_row_lock (tid) VALUES (0); ";
  statements += settings_.keep_history ? 11 : 7;
  if (settings_.has_deletion_mark) {
    // Every instance's next poll must see the zap (backend/deletion_mark.h).
    sql += backend::zap_deletion_mark_sql(system_clock()->now());
    sql += "; ";
    ++statements;
  }
  try {
    // The mirror goes with the objects, and its progress too: restores after a zap may
    // bring TIDs below the one it had reached.
    if (mirror) {
      sql +=
          "DELETE FROM object_json; DELETE FROM object_json_error; "
          "UPDATE relstore_json_mirror SET last_tid = 0 WHERE id = 0; ";
      statements += 3;
    }
    if (settings_.has_conversion_note) {
      sql += "DELETE FROM relstore_conversion; ";
      ++statements;
    }
    sql += "COMMIT";
    conn->batch(sql, statements, Context::other);
  } catch (...) {
    conn->rollback();
    throw;
  }
  OidAllocator(*conn).reset();
}

std::unique_ptr<backend::PackSession> MysqlAdapter::open_pack() {
  if (settings_.read_only) throw ReadOnlyError();
  return open_pack_session(settings_, *this);
}

bool MysqlAdapter::set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) {
  if (settings_.read_only) throw ReadOnlyError();
  if (!settings_.has_conversion_note) return false;  // not migrated yet (`relstore migrate up`)
  // One statement on an autocommit session: the row is replaced or removed whole.
  std::string sql = "DELETE FROM relstore_conversion";
  if (note) {
    sql = "REPLACE INTO relstore_conversion (id, source, started_at) VALUES (0, ";
    append_binary_literal(sql, note->source);
    sql += ", ";
    append_binary_literal(sql, note->started_at);
    sql += ")";
  }
  open_connection(settings_, Role::admin, this)->exec(sql, Context::other);
  return true;
}

void MysqlAdapter::bulk_begin() {
  if (settings_.read_only) throw ReadOnlyError();
  // Each holds the lock on its own session from its creation.
  if (settings_.keep_history) {
    if (!loader_ || !loader_->healthy()) loader_ = std::make_unique<BulkLoader>(settings_, *this);
  } else if (!bulk_ || !bulk_->healthy()) {
    bulk_ = std::make_unique<MysqlStoreConnection>(settings_, *this);
    bulk_->hold_bulk_lock();
  }
}

void MysqlAdapter::bulk_apply_current(std::span<const backend::BulkRecord> records,
                                      std::optional<Tid> expected_last) {
  if (settings_.keep_history) throw StorageError("bulk loading is for history-free databases");
  bulk_begin();
  bulk_->apply_current(records, expected_last);
}

void MysqlAdapter::bulk_restore(std::span<const TransactionRecord> transactions,
                                std::optional<Tid> expected_last) {
  if (!settings_.keep_history) {
    throw StorageError("a transaction bulk load needs a history-preserving database");
  }
  bulk_begin();
  loader_->restore(transactions, expected_last);
}

bool MysqlAdapter::wait_for_bulk_loads(const std::atomic<bool>* stop) {
  return take_bulk_lock(*open_connection(settings_, Role::inspect, this), settings_.lock_timeout,
                        false, stop);
}

void MysqlAdapter::bulk_finish() {
  bulk_.reset();
  loader_.reset();
}

backend::MirrorState MysqlAdapter::mirror_state() { return mirror_->state(); }

void MysqlAdapter::set_mirror_mode(MirrorMode mode) { mirror_->set_mode(mode); }

backend::MirrorChanges MysqlAdapter::mirror_changes(Tid since, size_t limit) {
  return mirror_->changes(since, limit);
}

std::vector<Oid> MysqlAdapter::mirror_orphans(size_t limit) { return mirror_->orphans(limit); }

void MysqlAdapter::mirror_apply(const mirror::Batch& batch,
                                std::optional<mirror::Advance> advance) {
  mirror_->apply(batch, advance);
}

void MysqlAdapter::mirror_clear() { mirror_->clear(); }

void MysqlAdapter::mirror_settle() { mirror_->settle(); }

std::vector<int> MysqlAdapter::applied_migrations() {
  auto conn = open_connection(settings_, Role::admin, nullptr);
  return applied_versions(*conn);
}

void MysqlAdapter::apply_migration(const Migration& migration) {
  if (settings_.read_only) throw ReadOnlyError();
  auto conn = open_connection(settings_, Role::admin, nullptr);
  apply_one(*conn, migration, settings_.keep_history);
}

}  // namespace relstore::mysql

namespace relstore::backend {

std::unique_ptr<Adapter> make_mysql_adapter(const StorageUri& uri, const StorageOptions& options) {
  return std::make_unique<mysql::MysqlAdapter>(uri, options);
}

}  // namespace relstore::backend
