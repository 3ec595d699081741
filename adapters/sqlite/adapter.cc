#include "adapters/sqlite/adapter.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "adapters/sqlite/bulk_loader.h"
#include "adapters/sqlite/bulk_lock.h"
#include "adapters/sqlite/db_iterator.h"
#include "adapters/sqlite/json_mirror.h"
#include "adapters/sqlite/load_connection.h"
#include "adapters/sqlite/oid_allocator.h"
#include "adapters/sqlite/pack_session.h"
#include "adapters/sqlite/queries.h"
#include "adapters/sqlite/schema_installer.h"
#include "adapters/sqlite/store_connection.h"
#include "backend/registry.h"
#include "option_values.h"
#include "paths.h"
#include "relstore/clock.h"
#include "relstore/errors.h"

namespace relstore::sqlite {
namespace {

// A bulk load runs the database with a rollback journal (bulk_loader.h); one killed before
// it switched back leaves the file so, and then every commit waits for all readers of every
// process. A writer puts WAL mode back: at once when no other connection is in the way,
// otherwise at the next writable open. Not while a load runs (it holds the bulk-load lock
// and turns WAL mode back on when it ends). `db` has its busy timeout set.
void use_wal(Db& db, const Location& loc) {
  {
    Stmt mode(db.handle(), "PRAGMA journal_mode", false);
    if (mode.step() && mode.blob(0) == "wal") return;
  }
  if (BulkLock::held(loc)) return;
  db.set_busy_timeout(0);
  try {
    Stmt wal(db.handle(), "PRAGMA journal_mode = WAL", false);
    wal.step();
  } catch (const StorageError&) {
    // Busy: another connection reads or writes now.
  }
  db.set_busy_timeout(loc.lock_timeout);
}

}  // namespace

std::unique_ptr<Db> open_main(const Location& loc, Role role) {
  const bool writable = role == Role::store && !loc.read_only;
  auto db = writable ? std::make_unique<Db>(loc.main_path, SQLITE_OPEN_READWRITE)
                     : open_for_reading(loc.main_path, loc.immutable);
  // SQLite opens a file it may not write read-only without a word; BEGIN IMMEDIATE at vote
  // still succeeds then, and the commit would fail in tpc_finish, after its vote.
  if (writable && db->read_only()) {
    throw ReadOnlyError(loc.main_path +
                        " is not writable by this user: open the database "
                        "read-only (?read_only=true) or give write access to it");
  }
  db->set_busy_timeout(loc.lock_timeout);
  if (writable) use_wal(*db, loc);
  db->exec("PRAGMA foreign_keys = ON");
  if (writable) {
    db->exec("PRAGMA synchronous = NORMAL");
    // Checkpoints are where WAL mode syncs; each commit appends whole pages to the WAL, so
    // the default 1000-page threshold checkpoints (and fsyncs twice) every few dozen small
    // commits. 10000 pages (40 MB) keeps the WAL bounded and the syncs rare.
    db->exec("PRAGMA wal_autocheckpoint = 10000");
  } else {
    db->exec("PRAGMA query_only = ON");
  }
  for (const auto& [name, value] : loc.pragmas) db->exec("PRAGMA " + name + " = " + value);
  return db;
}

SqliteAdapter::SqliteAdapter(const StorageUri& uri, const StorageOptions& options) {
  for (const auto& [key, value] : options.driver) {
    if (key == "immutable") {
      loc_.immutable = parse_bool(key, value);
      continue;
    }
    if (!key.starts_with("pragma.")) {
      throw ConfigError("unknown option '" + key +
                        "' for a sqlite: URI (known: history, read_only, cache_mb, "
                        "commit_lock_timeout, create, immutable, pragma.NAME)");
    }
    const std::string name = key.substr(7);
    if (const std::string problem = sqlite_pragma_problem(name, value); !problem.empty()) {
      throw ConfigError("option " + key + ": " + problem);
    }
    if (sqlite_pragma_is_relstores(name, value)) continue;
    loc_.pragmas.emplace_back(name, value);
  }
  namespace fs = std::filesystem;
  loc_.dir = uri.database;
  loc_.main_path = (fs::path(loc_.dir) / "main.sqlite3").string();
  loc_.oids_path = (fs::path(loc_.dir) / "oids.sqlite3").string();
  loc_.read_only = options.read_only || loc_.immutable;  // open_storage implies it too
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
  const bool marked = !loc_.keep_history && db->has_table(backend::kDeletionMarkTable);
  out.last_tid = Tid::from_sql(db->query_int(q.last_tid));
  if (marked) {
    const Tid record = Tid::from_sql(db->query_int(kDeletionMark));
    out.last_tid = backend::last_finished(out.last_tid, record);
    out.last_deletion = backend::deletion_tid(record);
  }
  out.schema_version = schema_version(*db);
  if (db->has_table("relstore_conversion")) {
    Stmt& note = db->prepared("SELECT source, started_at FROM relstore_conversion");
    const StmtScope scope(note);
    if (note.step()) out.unfinished_conversion = UnfinishedConversion{note.blob(0), note.blob(1)};
  }
  db->exec("COMMIT");
  return out;
}

backend::CurrentFaults SqliteAdapter::current_faults() {
  backend::CurrentFaults out;
  if (!loc_.keep_history) return out;
  auto db = open_main(loc_, Role::inspect);
  db->exec("BEGIN");
  Stmt& s = db->prepared(backend::kCurrentFaultsSql.c_str());
  {
    const StmtScope scope(s);
    while (s.step()) {
      out.oids.push_back(Oid::from_sql(s.int64(0)));
      out.count = static_cast<uint64_t>(s.int64(1));
    }
  }
  db->exec("COMMIT");
  return out;
}

std::string SqliteAdapter::identity() { return path_identity("sqlite", loc_.dir); }

void SqliteAdapter::zap_all() {
  if (loc_.read_only) throw ReadOnlyError();
  // Not while a conversion loads the database, nor the other way round (bulk_lock.h).
  const BulkLock lock(loc_);
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
    // Empty again, and every instance's next poll must say so (backend/deletion_mark.h).
    if (!loc_.keep_history && db->has_table(backend::kDeletionMarkTable)) {
      db->exec(backend::zap_deletion_mark_sql(system_clock()->now()));
    }
    // The mirror goes with the objects, and its progress too: restores after a zap may
    // bring TIDs below the one it had reached.
    json_mirror::forget(*db);
    if (db->has_table("relstore_conversion")) db->exec("DELETE FROM relstore_conversion");
    db->exec("COMMIT");
  } catch (...) {
    db->rollback_quietly();
    throw;
  }
  OidAllocator(loc_).reset();
}

std::unique_ptr<backend::PackSession> SqliteAdapter::open_pack() {
  if (loc_.read_only) throw ReadOnlyError();
  return open_pack_session(loc_);
}

bool SqliteAdapter::set_unfinished_conversion(const std::optional<UnfinishedConversion>& note) {
  if (loc_.read_only) throw ReadOnlyError();
  auto db = open_main(loc_, Role::store);
  if (!db->has_table("relstore_conversion")) return false;  // not migrated yet
  // One statement, its own transaction: the row is replaced or removed whole.
  if (!note) {
    db->exec("DELETE FROM relstore_conversion");
    return true;
  }
  Stmt& insert = db->prepared(
      "INSERT OR REPLACE INTO relstore_conversion (id, source, started_at) VALUES (0, ?, ?)");
  const StmtScope scope(insert);
  insert.bind_text(1, note->source).bind_text(2, note->started_at);
  insert.run();
  return true;
}

BulkLoader& SqliteAdapter::bulk() {
  if (loc_.read_only) throw ReadOnlyError();
  if (!bulk_) bulk_ = std::make_unique<BulkLoader>(loc_);
  return *bulk_;
}

void SqliteAdapter::bulk_apply_current(std::span<const backend::BulkRecord> records,
                                       std::optional<Tid> expected_last) {
  bulk().apply_current(records, expected_last);
}

void SqliteAdapter::bulk_restore(std::span<const TransactionRecord> transactions,
                                 std::optional<Tid> expected_last) {
  bulk().restore(transactions, expected_last);
}

void SqliteAdapter::bulk_finish() { bulk_.reset(); }

SqliteAdapter::~SqliteAdapter() = default;

Db& SqliteAdapter::mirror_db() {
  if (!mirror_db_) mirror_db_ = open_main(loc_, loc_.read_only ? Role::inspect : Role::store);
  return *mirror_db_;
}

backend::MirrorState SqliteAdapter::mirror_state() {
  return json_mirror::state(mirror_db(), loc_.keep_history);
}

void SqliteAdapter::set_mirror_mode(MirrorMode mode) {
  if (loc_.read_only) throw ReadOnlyError();
  json_mirror::set_mode(mirror_db(), mode);
}

backend::MirrorChanges SqliteAdapter::mirror_changes(Tid since, size_t limit) {
  return json_mirror::changes(mirror_db(), loc_.keep_history, since, limit);
}

std::vector<Oid> SqliteAdapter::mirror_orphans(size_t limit) {
  return json_mirror::orphans(mirror_db(), loc_.keep_history, limit);
}

void SqliteAdapter::mirror_apply(const mirror::Batch& batch,
                                 std::optional<mirror::Advance> advance) {
  if (loc_.read_only) throw ReadOnlyError();
  json_mirror::apply(mirror_db(), loc_.keep_history, batch, advance);
}

void SqliteAdapter::mirror_clear() {
  if (loc_.read_only) throw ReadOnlyError();
  json_mirror::clear(mirror_db());
}

void SqliteAdapter::mirror_settle() {
  if (loc_.read_only) throw ReadOnlyError();
  json_mirror::settle(mirror_db(), loc_.keep_history);
}

std::vector<int> SqliteAdapter::applied_migrations() {
  auto db = open_main(loc_, Role::inspect);
  return applied_versions(*db);
}

void SqliteAdapter::apply_migration(const Migration& migration) {
  if (loc_.read_only) throw ReadOnlyError();
  auto db = open_main(loc_, Role::store);
  apply_one(*db, migration, loc_.keep_history);
}

}  // namespace relstore::sqlite

namespace relstore::backend {

std::unique_ptr<Adapter> make_sqlite_adapter(const StorageUri& uri, const StorageOptions& options) {
  return std::make_unique<sqlite::SqliteAdapter>(uri, options);
}

}  // namespace relstore::backend
