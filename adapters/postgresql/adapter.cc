#include "adapters/postgresql/adapter.h"

#include <algorithm>
#include <cmath>

#include "adapters/postgresql/bulk_loader.h"
#include "adapters/postgresql/db_iterator.h"
#include "adapters/postgresql/json_mirror.h"
#include "adapters/postgresql/load_connection.h"
#include "adapters/postgresql/oid_allocator.h"
#include "adapters/postgresql/pack_session.h"
#include "adapters/postgresql/queries.h"
#include "adapters/postgresql/schema_installer.h"
#include "adapters/postgresql/store_connection.h"
#include "backend/registry.h"
#include "relstore/clock.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

const char* role_name(Role role) {
  switch (role) {
    case Role::load:
      return "load";
    case Role::store:
      return "store";
    case Role::admin:
      return "admin";
    case Role::iterator:
      return "iterator";
    case Role::listen:
      return "listen";
  }
  return "?";
}

}  // namespace

Location location_of(const StorageUri& uri, const StorageOptions& options) {
  Location loc;
  auto& params = loc.connect.params;
  if (!uri.host.empty()) params.emplace_back("host", uri.host);
  if (uri.port) params.emplace_back("port", std::to_string(*uri.port));
  if (!uri.database.empty()) params.emplace_back("dbname", uri.database);
  if (!uri.user.empty()) params.emplace_back("user", uri.user);
  if (!uri.password.empty()) params.emplace_back("password", uri.password);
  const std::vector<std::string> known = libpq_keywords();
  bool has_connect_timeout = false;
  for (const auto& [key, value] : options.driver) {
    // The same part in the address and as an option: libpq would take whichever came
    // last, without a word (the value is not quoted: it may be the password).
    const bool in_address = (key == "host" && !uri.host.empty()) || (key == "port" && uri.port) ||
                            (key == "dbname" && !uri.database.empty()) ||
                            (key == "user" && !uri.user.empty()) ||
                            (key == "password" && !uri.password.empty());
    if (in_address) {
      throw ConfigError("malformed URI: the " + key + " is given in the address and again as ?" +
                        key + "=");
    }
    if (key == "application_name") {
      loc.application_name = value;
    } else if (key == "options") {
      loc.options = value;
    } else if (std::find(known.begin(), known.end(), key) != known.end()) {
      has_connect_timeout = has_connect_timeout || key == "connect_timeout";
      params.emplace_back(key, value);
    } else {
      // The value is not quoted: it could be a secret given under a misspelt name.
      throw ConfigError("unknown option '" + key +
                        "' for a postgresql: URI (relstore's: history, read_only, cache_mb, "
                        "commit_lock_timeout, create; anything else must be a libpq "
                        "connection parameter such as sslmode or connect_timeout)");
    }
  }
  // libpq waits forever by default; an unreachable server should be an error instead.
  if (!has_connect_timeout) params.emplace_back("connect_timeout", "10");
  loc.connect.describe = uri.redacted();
  loc.read_only = options.read_only;
  loc.lock_timeout = options.commit_lock_timeout;
  return loc;
}

std::unique_ptr<Conn> open_conn(const Location& loc, Role role, backend::Adapter* counter) {
  ConnectSpec spec = loc.connect;
  std::string name = std::string("relstore ") + role_name(role);
  if (!loc.application_name.empty()) name = loc.application_name + " (" + name + ")";
  spec.params.emplace_back("application_name", name);
  // READ COMMITTED whatever the server's or database's default: a vote reads serials
  // after waiting for object locks and must see the commits it waited for (snapshots
  // ask for REPEATABLE READ explicitly).
  std::string settings = loc.options + " -c default_transaction_isolation=read\\ committed";
  if (role == Role::store || role == Role::admin) {
    // lock_timeout 0 would mean "wait forever": the shortest wait is 1 ms.
    const long ms = std::max(1L, std::lround(loc.lock_timeout * 1000));
    settings += " -c lock_timeout=" + std::to_string(ms);
    // A statement_timeout of the role or database would cut the waits for locks short
    // with an error that is neither a lock conflict nor retryable; lock_timeout is the
    // limit a commit keeps to.
    settings += " -c statement_timeout=0";
  }
  if (!settings.empty()) spec.params.emplace_back("options", settings);
  return std::make_unique<Conn>(spec, counter);
}

PostgresqlAdapter::PostgresqlAdapter(const StorageUri& uri, const StorageOptions& options)
    : loc_(location_of(uri, options)) {
  const SchemaFacts facts = install_schema(loc_, options, *this);
  loc_.keep_history = facts.keep_history;
  loc_.json_mirror = facts.json_mirror;
  loc_.deletion_mark = facts.deletion_mark;
  loc_.conversion_note = facts.conversion_note;
  mirror_ = std::make_unique<json_mirror::Mirror>(loc_, *this);
}

PostgresqlAdapter::~PostgresqlAdapter() = default;

std::unique_ptr<backend::LoadConnection> PostgresqlAdapter::open_load() {
  return std::make_unique<PgLoadConnection>(loc_, *this);
}

std::unique_ptr<backend::StoreConnection> PostgresqlAdapter::open_store() {
  if (loc_.read_only) throw ReadOnlyError();
  return std::make_unique<PgStoreConnection>(loc_, *this);
}

std::unique_ptr<TransactionIterator> PostgresqlAdapter::open_iterator(std::optional<Tid> start,
                                                                      std::optional<Tid> stop) {
  return std::make_unique<PgIterator>(loc_, *this, start, stop);
}

StorageInfo PostgresqlAdapter::info() {
  auto conn = open_conn(loc_, Role::admin, this);
  const Queries& q = queries(loc_.keep_history);
  // One snapshot for all the figures, in one round trip.
  const auto r = conn->simple(
      std::string("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ") + q.count_objects + "; " +
          q.count_transactions + "; " + kStateBytes + "; " + q.last_tid.sql + "; " +
          (loc_.deletion_mark ? kDeletionMark.sql : "SELECT 0") + "; " +
          (loc_.conversion_note ? "SELECT source, started_at FROM relstore_conversion"
                                : "SELECT 1 WHERE false") +
          "; COMMIT",
      Context::read);
  StorageInfo out;
  out.backend = "postgresql";
  out.keep_history = loc_.keep_history;
  out.objects = static_cast<uint64_t>(r[1].int64(0, 0));
  out.transactions = static_cast<uint64_t>(r[2].int64(0, 0));
  out.size_bytes = static_cast<uint64_t>(r[3].int64(0, 0));
  const Tid record = Tid::from_sql(r[5].int64(0, 0));  // 0 without the table ("SELECT 0")
  out.last_tid = backend::last_finished(Tid::from_sql(r[4].int64(0, 0)), record);
  if (loc_.deletion_mark) out.last_deletion = backend::deletion_tid(record);
  if (r[6].rows() > 0)
    out.unfinished_conversion = UnfinishedConversion{r[6].bytes(0, 0), r[6].bytes(0, 1)};
  out.schema_version = schema_version(*conn);
  return out;
}

backend::CurrentFaults PostgresqlAdapter::current_faults() {
  backend::CurrentFaults out;
  if (!loc_.keep_history) return out;
  auto conn = open_conn(loc_, Role::admin, this);
  const auto r = conn->simple(
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; " + backend::kCurrentFaultsSql + "; COMMIT",
      Context::read);
  for (int i = 0; i < r[1].rows(); ++i) {
    out.oids.push_back(Oid::from_sql(r[1].int64(i, 0)));
    out.count = static_cast<uint64_t>(r[1].int64(i, 1));
  }
  return out;
}

std::string PostgresqlAdapter::identity() {
  auto conn = open_conn(loc_, Role::admin, this);
  return conn->simple(kIdentity, Context::read).front().bytes(0, 0);
}

void PostgresqlAdapter::zap_all() {
  if (loc_.read_only) throw ReadOnlyError();
  auto conn = open_conn(loc_, Role::admin, this);
  // Not while a bulk load writes (the last batch of a killed conversion may still be
  // committing), and the other way round: a resume waits for a zap still running.
  take_bulk_lock(*conn, loc_.lock_timeout, true);
  // DELETE rather than TRUNCATE: TRUNCATE waits for every reader holding a snapshot, and
  // DELETE lets the blob_chunk trigger unlink the large objects. The commit lock keeps
  // commits out while the tables empty.
  conn->simple(
      // Mirror batches first (json_mirror.cc, kWriterLock), then commits.
      std::string("BEGIN; SELECT pg_advisory_xact_lock(1919249523, 5); ") +
          object_table_lock_sql(loc_.keep_history) + "; " + kCommitLockSql + "; " +
          (loc_.keep_history
               ? "DELETE FROM current_object; DELETE FROM blob_chunk; "
                 "DELETE FROM object_state; DELETE FROM \"transaction\" WHERE tid > 0; "
                 "DELETE FROM object_ref; DELETE FROM object_refs_added; "
                 "DELETE FROM pack_object; DELETE FROM pack_state; "
                 "DELETE FROM pack_state_tid; "
               : "DELETE FROM blob_chunk; DELETE FROM object_state; "
                 "DELETE FROM object_ref; DELETE FROM object_refs_added; "
                 "DELETE FROM pack_object; ") +
          // Every instance's next poll must see the zap (backend/deletion_mark.h).
          (loc_.deletion_mark ? backend::zap_deletion_mark_sql(system_clock()->now()) + "; " : "") +
          // The mirror goes with the objects; its progress too, since later
          // commits or restores may bring TIDs below the one it had reached.
          (loc_.json_mirror ? "DELETE FROM object_json; DELETE FROM object_json_error; "
                              "UPDATE relstore_json_mirror SET last_tid = 0; "
                            : "") +
          (loc_.conversion_note ? "DELETE FROM relstore_conversion; " : "") + kResetOids +
          "; COMMIT",
      Context::other);
}

std::unique_ptr<backend::PackSession> PostgresqlAdapter::open_pack() {
  if (loc_.read_only) throw ReadOnlyError();
  return open_pack_session(loc_, *this);
}

bool PostgresqlAdapter::set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) {
  if (loc_.read_only) throw ReadOnlyError();
  if (!loc_.conversion_note) return false;  // not migrated yet (`relstore migrate up`)
  // One statement, its own transaction: the row is replaced or removed whole.
  constexpr Statement kUpsert = {
      "",
      "INSERT INTO relstore_conversion (id, source, started_at) VALUES (0, $1, $2) "
      "ON CONFLICT (id) DO UPDATE SET source = EXCLUDED.source, "
      "started_at = EXCLUDED.started_at"};
  auto conn = open_conn(loc_, Role::admin, this);
  if (note) {
    conn->run(kUpsert, Params().bytes(note->source).bytes(note->started_at), Context::other);
  } else {
    conn->simple("DELETE FROM relstore_conversion", Context::other);
  }
  return true;
}

std::vector<int> PostgresqlAdapter::applied_migrations() {
  auto conn = open_conn(loc_, Role::admin, this);
  return applied_versions(*conn);
}

void PostgresqlAdapter::apply_migration(const Migration& migration) {
  if (loc_.read_only) throw ReadOnlyError();
  auto conn = open_conn(loc_, Role::admin, this);
  apply_one(*conn, migration, loc_.keep_history);
}

void PostgresqlAdapter::bulk_apply_current(std::span<const backend::BulkRecord> records,
                                           std::optional<Tid> expected_last) {
  bulk_begin();
  bulk_->apply_current(records, expected_last);
}

void PostgresqlAdapter::bulk_restore(std::span<const TransactionRecord> transactions,
                                     std::optional<Tid> expected_last) {
  bulk_begin();
  bulk_->restore(transactions, expected_last);
}

void PostgresqlAdapter::bulk_begin() {
  if (loc_.read_only) throw ReadOnlyError();
  if (!bulk_) bulk_ = std::make_unique<BulkLoader>(loc_, *this);  // takes the lock
}

void PostgresqlAdapter::bulk_finish() { bulk_.reset(); }

bool PostgresqlAdapter::wait_for_bulk_loads(const std::atomic<bool>* stop) {
  auto conn = open_conn(loc_, Role::admin, this);
  return take_bulk_lock(*conn, loc_.lock_timeout, false, stop);
}

DecodeOptions PostgresqlAdapter::mirror_decode_options() const {
  DecodeOptions o;
  o.replace_nul = true;  // jsonb refuses \u0000
  return o;
}

backend::MirrorState PostgresqlAdapter::mirror_state() { return mirror_->state(); }

void PostgresqlAdapter::set_mirror_mode(MirrorMode mode) {
  if (loc_.read_only) throw ReadOnlyError();
  mirror_->set_mode(mode);
}

backend::MirrorChanges PostgresqlAdapter::mirror_changes(Tid since, size_t limit) {
  return mirror_->changes(since, limit);
}

std::vector<Oid> PostgresqlAdapter::mirror_orphans(size_t limit) { return mirror_->orphans(limit); }

void PostgresqlAdapter::mirror_apply(const mirror::Batch& batch,
                                     std::optional<mirror::Advance> advance) {
  if (loc_.read_only) throw ReadOnlyError();
  mirror_->apply(batch, advance);
}

void PostgresqlAdapter::mirror_clear() {
  if (loc_.read_only) throw ReadOnlyError();
  mirror_->clear();
}

void PostgresqlAdapter::mirror_settle() {
  if (loc_.read_only) throw ReadOnlyError();
  mirror_->settle();
}

void PostgresqlAdapter::mirror_wait(double seconds) { mirror_->wait(seconds); }

}  // namespace relstore::postgresql

namespace relstore::backend {

std::unique_ptr<Adapter> make_postgresql_adapter(const StorageUri& uri,
                                                 const StorageOptions& options) {
  return std::make_unique<postgresql::PostgresqlAdapter>(uri, options);
}

void check_postgresql_options(const StorageUri& uri) {
  postgresql::location_of(uri, uri.options());
}

}  // namespace relstore::backend
