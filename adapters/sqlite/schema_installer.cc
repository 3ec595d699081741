#include "adapters/sqlite/schema_installer.h"

#include <ctime>
#include <filesystem>
#include <set>

#include "adapters/sqlite/bulk_lock.h"
#include "adapters/sqlite/oid_allocator.h"
#include "embedded_sql.h"
#include "option_values.h"
#include "relstore/errors.h"
#include "schema/migrations.h"

namespace relstore::sqlite {
namespace {

namespace fs = std::filesystem;

std::set<std::string> table_names(Db& db) {
  std::set<std::string> out;
  Stmt& s = db.prepared("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')");
  StmtScope scope(s);
  while (s.step()) out.insert(s.blob(0));
  return out;
}

std::string utc_now() {
  const time_t t = time(nullptr);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void record_migration(Db& db, int version, const std::string& name) {
  const std::string when = utc_now();
  Stmt& s = db.prepared(
      "INSERT OR IGNORE INTO relstore_schema (version, name, applied_at) VALUES (?, ?, ?)");
  s.bind(1, version).bind_text(2, name).bind_text(3, when);
  s.run();
}

const char* mode_name(bool keep_history) {
  return keep_history ? "history-preserving" : "history-free";
}

// Creates the newest schema in an empty database, inside the caller's write transaction.
void create_schema(Db& db, bool keep_history) {
  db.exec(embedded_sql("sql/sqlite/schema_version.sql"));
  for (const Migration& m : migrations_for("sqlite")) {
    for (const std::string& stmt : migration_statements(m.text, keep_history)) db.exec(stmt);
    record_migration(db, m.version, m.name);
  }
}

// Brings a database created by RelStorage (or an older relstore) to what relstore needs,
// without touching object data.
void adopt_schema(Db& db, const std::set<std::string>& tables) {
  if (!tables.count("relstore_schema")) {
    db.exec(embedded_sql("sql/sqlite/schema_version.sql"));
    record_migration(db, 1, migrations_for("sqlite").front().name);
  }
  db.exec("INSERT OR IGNORE INTO commit_row_lock (tid) VALUES (0)");
}

}  // namespace

bool install_schema(const Location& loc, const StorageOptions& options) {
  const bool may_create = options.create && !loc.read_only;
  std::error_code ec;
  if (fs::exists(loc.dir, ec) && !fs::is_directory(loc.dir, ec)) {
    throw SchemaError(loc.dir +
                      " is not a directory; a sqlite: URI names a data directory "
                      "holding main.sqlite3 and oids.sqlite3");
  }
  if (!fs::exists(loc.main_path, ec)) {
    if (!may_create) {
      throw NoSchemaError("no database at " + loc.dir + ": " + loc.main_path + " does not exist");
    }
    fs::create_directories(loc.dir, ec);
    if (ec) throw StorageError("cannot create the directory " + loc.dir + ": " + ec.message());
  }

  std::unique_ptr<Db> opened =
      may_create ? std::make_unique<Db>(loc.main_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
                 : open_for_reading(loc.main_path, loc.immutable);
  Db& db = *opened;
  db.set_busy_timeout(loc.lock_timeout);
  if (!may_create) db.exec("PRAGMA query_only = ON");
  std::set<std::string> tables = table_names(db);  // fails here for a file that is not SQLite

  if (!tables.count("object_state")) {
    if (tables.count("relstore_schema")) {
      throw SchemaError(leftover_tables_message(loc.main_path, relstore_only_tables(tables)));
    }
    if (!tables.empty()) {
      throw SchemaError(loc.main_path +
                        " is a SQLite database but not a relstore/RelStorage one "
                        "(it has tables but no object_state)");
    }
    if (!may_create) throw NoSchemaError("the database in " + loc.dir + " has no schema");
    const bool keep_history = options.history != HistoryMode::free;
    // WAL and page size persist in the file and must be set outside a transaction, the
    // page size before WAL (as RelStorage sets a configured one): in WAL mode it no
    // longer changes.
    db.exec("PRAGMA page_size = 4096");
    for (const auto& [name, value] : loc.pragmas) {
      if (sqlite_pragma_is_set_at_creation(name)) db.exec("PRAGMA " + name + " = " + value);
    }
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another process may have created the schema while we waited for the lock.
      tables = table_names(db);
      if (!tables.count("object_state")) create_schema(db, keep_history);
      db.exec("COMMIT");
    } catch (...) {
      db.rollback_quietly();
      throw;
    }
    tables = table_names(db);
  }

  const bool has_hp_tables = tables.count("transaction") || tables.count("current_object");
  const bool keep_history = has_hp_tables;
  if (keep_history && !(tables.count("transaction") && tables.count("current_object"))) {
    throw SchemaError(loc.main_path +
                      " has only one of the tables transaction and "
                      "current_object; the schema is damaged");
  }
  if (options.history != HistoryMode::detect &&
      (options.history == HistoryMode::preserving) != keep_history) {
    throw SchemaError("the database in " + loc.dir + " is " + mode_name(keep_history) +
                      ", but it was opened as " +
                      mode_name(options.history == HistoryMode::preserving) +
                      " (history=" + (keep_history ? "preserving" : "free") + " opens it)");
  }
  for (const char* required : {"commit_row_lock", "blob_chunk"}) {
    if (!tables.count(required)) {
      throw SchemaError(loc.main_path + " lacks the table " + required);
    }
  }
  // Before anything is changed: a newer release's schema is not this one's to write.
  if (tables.count("relstore_schema")) {
    check_not_newer(
        "sqlite",
        static_cast<int>(db.query_int("SELECT COALESCE(MAX(version), 0) FROM relstore_schema")),
        loc.main_path);
  }
  const bool needs_adoption =
      !tables.count("relstore_schema") ||
      db.query_int("SELECT COUNT(*) FROM commit_row_lock WHERE tid = 0") == 0;
  // Every writable open makes sure of WAL mode, which a bulk load interrupted by a crash
  // may have left switched off (bulk_loader.h); not while a load runs, which switches it
  // back itself when it ends.
  if (may_create && !BulkLock::held(loc)) db.exec("PRAGMA journal_mode = WAL");
  if (may_create && needs_adoption) {
    db.exec("BEGIN IMMEDIATE");
    try {
      adopt_schema(db, tables);
      db.exec("COMMIT");
    } catch (...) {
      db.rollback_quietly();
      throw;
    }
  }
  // Every writable open, create=false too: the counter of an older relstore's file must
  // move on before this process hands out OIDs from it (oid_allocator.cc).
  if (!loc.read_only) OidAllocator(loc).ensure_schema();
  return keep_history;
}

std::vector<int> applied_versions(Db& db) {
  std::vector<int> out;
  if (!table_names(db).count("relstore_schema")) return out;
  Stmt& s = db.prepared("SELECT version FROM relstore_schema ORDER BY version");
  StmtScope scope(s);
  while (s.step()) out.push_back(static_cast<int>(s.int64(0)));
  return out;
}

void apply_one(Db& db, const Migration& m, bool keep_history) {
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(embedded_sql("sql/sqlite/schema_version.sql"));
    // Another process may have applied it while we waited for the write lock.
    const std::string applied =
        "SELECT COUNT(*) FROM relstore_schema WHERE version = " + std::to_string(m.version);
    if (db.query_int(applied.c_str()) == 0) {
      for (const std::string& stmt : migration_statements(m.text, keep_history)) db.exec(stmt);
      record_migration(db, m.version, m.name);
    }
    db.exec("COMMIT");
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
}

std::string schema_version(Db& db) {
  if (!table_names(db).count("relstore_schema")) return "RelStorage (no relstore_schema table)";
  return std::to_string(db.query_int("SELECT MAX(version) FROM relstore_schema"));
}

}  // namespace relstore::sqlite
