#include "adapters/postgresql/schema_installer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "backend/deletion_mark.h"
#include "embedded_sql.h"
#include "md5.h"
#include "relstore/errors.h"
#include "schema/migrations.h"
#include "schema/server_code.h"

namespace relstore::postgresql {
namespace {

// relstore's own advisory key for schema changes (two-key form, apart from RelStorage's
// one-key locks), so that processes opening an empty database at once create it once.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(1919249523, 1)";

// What the database holds, read from the catalogs of the current schema (the first
// existing schema on search_path, where unqualified names resolve).
struct Inspection {
  std::set<std::string> relations;  // tables, views, sequences
  int version = 0;                  // newest applied relstore migration; 0: none recorded
  bool has_lock_row = false;        // commit_row_lock holds its row 0
  std::map<std::string, std::string> checksums;  // relstore_* function -> comment
};

Result query(Conn& conn, const char* sql) {
  return conn.run(Statement{"", sql}, Params(), Context::schema);
}

Inspection inspect(Conn& conn) {
  Inspection out;
  Result r = query(conn,
                   "SELECT relname::text FROM pg_class "
                   "WHERE relnamespace = current_schema()::regnamespace "
                   "AND relkind IN ('r', 'p', 'v', 'm', 'S')");
  for (int i = 0; i < r.rows(); ++i) out.relations.insert(r.bytes(i, 0));
  if (out.relations.count("relstore_schema")) {
    out.version = static_cast<int>(
        query(conn, "SELECT COALESCE(MAX(version), 0) FROM relstore_schema").int64(0, 0));
  }
  if (out.relations.count("commit_row_lock")) {
    out.has_lock_row =
        query(conn, "SELECT COUNT(*) FROM commit_row_lock WHERE tid = 0").int64(0, 0) > 0;
  }
  r = query(conn,
            "SELECT proname::text, COALESCE(obj_description(oid, 'pg_proc'), '') FROM pg_proc "
            "WHERE pronamespace = current_schema()::regnamespace "
            "AND proname LIKE 'relstore\\_%'");
  for (int i = 0; i < r.rows(); ++i) out.checksums[r.bytes(i, 0)] = r.bytes(i, 1);
  return out;
}

std::vector<std::string> function_statements(const std::string& name, bool keep_history) {
  return migration_statements(embedded_sql("sql/postgresql/" + name + ".sql"), keep_history);
}

// The comment a function carries: the generation and a checksum of the text installed for
// this mode (src/schema/server_code.h).
std::string checksum_of(const std::string& name, bool keep_history) {
  std::string text;
  for (const auto& s : function_statements(name, keep_history)) text += s;
  return server_code_comment(md5_hex(text));
}

bool functions_current(const Inspection& seen, bool keep_history) {
  for (const auto& name : function_names()) {
    auto it = seen.checksums.find(name);
    if (it == seen.checksums.end() || it->second != checksum_of(name, keep_history)) return false;
  }
  return true;
}

// Installs the functions whose text changed. CREATE OR REPLACE keeps a function's identity,
// so sessions using it are not disturbed. A new signature creates an overload beside the
// old one, which processes of the previous version keep calling (never dropped here).
// Throws when any installed function comes from a newer relstore, before anything is
// replaced: a newer relstore's functions stay as they are.
void check_functions_not_newer(const Inspection& seen, const std::string& where) {
  for (const auto& [name, comment] : seen.checksums) {
    check_server_code_not_newer(name, comment, where);
  }
}

void install_functions(Conn& conn, const Inspection& seen, bool keep_history,
                       const std::string& where) {
  check_functions_not_newer(seen, where);
  for (const auto& name : function_names()) {
    const std::string checksum = checksum_of(name, keep_history);
    auto it = seen.checksums.find(name);
    if (it != seen.checksums.end() && it->second == checksum) continue;
    for (const auto& s : function_statements(name, keep_history)) conn.simple(s, Context::schema);
    const std::string sig_sql = "SELECT oid::regprocedure::text FROM pg_proc WHERE proname = '" +
                                name + "' AND pronamespace = current_schema()::regnamespace";
    const Result sig = query(conn, sig_sql.c_str());
    for (int i = 0; i < sig.rows(); ++i) {
      conn.simple("COMMENT ON FUNCTION " + sig.bytes(i, 0) + " IS '" + checksum + "'",
                  Context::schema);
    }
  }
}

void record_migration(Conn& conn, const Migration& m) {
  conn.simple("INSERT INTO relstore_schema (version, name, applied_at) VALUES (" +
                  std::to_string(m.version) + ", '" + m.name +
                  "', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')) "
                  "ON CONFLICT (version) DO NOTHING",
              Context::schema);
}

// Applies the migrations after `from` and records them.
void apply_migrations(Conn& conn, bool keep_history, int from) {
  for (const Migration& m : migrations_for("postgresql")) {
    if (m.version <= from) continue;
    for (const auto& s : migration_statements(m.text, keep_history)) {
      conn.simple(s, Context::schema);
    }
    record_migration(conn, m);
  }
}

// How long one attempt of a schema transaction waits for a table lock. DDL on a table in
// use (CREATE TRIGGER on object_state) waits for every transaction that wrote to it, and
// while it waits PostgreSQL queues every later writer behind it: an upgrade that waited
// the whole lock timeout would stall every commit, RelStorage's too, for as long. So an
// attempt gives way after this and tries again after a pause, until the connection's
// lock_timeout has passed in all.
constexpr int kSchemaLockWaitMs = 200;

// Runs `body` in one transaction under the schema lock; on failure rolls everything back.
// `body` may run more than once (above): it must read what it needs inside.
template <class F>
void in_schema_transaction(Conn& conn, const std::string& what, F&& body) {
  try {
    const Result limit = query(conn,
                               "SELECT (EXTRACT(EPOCH FROM current_setting('lock_timeout')::"
                               "interval) * 1000)::BIGINT");
    using std::chrono::milliseconds;
    const milliseconds total(std::max<int64_t>(1, limit.int64(0, 0)));
    const auto deadline = std::chrono::steady_clock::now() + total;
    // What is left of the lock timeout, at most one attempt's wait (a timeout shorter than
    // an attempt is not overshot).
    const auto next_wait = [&] {
      const auto left =
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      return std::clamp<int64_t>(left.count(), 1, kSchemaLockWaitMs);
    };
    for (;;) {
      try {
        conn.simple(std::string("BEGIN; ") + kSchemaLock +
                        "; SET LOCAL lock_timeout = " + std::to_string(next_wait()),
                    Context::schema);
        body();
        conn.simple("COMMIT", Context::schema);
        return;
      } catch (const SchemaLockBusy& e) {
        conn.rollback_quietly();
        if (std::chrono::steady_clock::now() >= deadline) {
          throw SchemaError(std::string(e.what()) + ": other transactions kept writing to the " +
                            "tables it changes for " + std::to_string(total.count()) +
                            " ms (the lock timeout); run `relstore migrate up` when they are " +
                            "fewer, or raise the timeout");
        }
        std::this_thread::sleep_for(milliseconds(next_wait()));
      }
    }
  } catch (const NewerSchemaError&) {
    conn.rollback_quietly();  // nothing was changed, and callers tell this one apart
    throw;
  } catch (const SchemaError& e) {
    conn.rollback_quietly();
    throw SchemaError(what + " failed and was rolled back; nothing was changed. " + e.what());
  } catch (...) {
    conn.rollback_quietly();
    throw;
  }
}

const char* mode_name(bool keep_history) {
  return keep_history ? "history-preserving" : "history-free";
}

}  // namespace

const std::vector<std::string>& function_names() {
  // SQL-language functions are checked when created: callees come first.
  static const std::vector<std::string> kNames = {
      "relstore_tid_for_epoch",    "relstore_current_tid",       "relstore_later_than",
      "relstore_records",          "relstore_last_tid",          "relstore_lock_and_detect",
      "relstore_finish",           "relstore_json_mirror_mode",  "relstore_current_state",
      "relstore_json_mirror_rows", "relstore_json_mirror_write", "relstore_finish_mirror"};
  return kNames;
}

SchemaFacts install_schema(const Location& loc, const StorageOptions& options,
                           backend::Adapter& counter) {
  const bool may_change = options.create && !options.read_only;
  const std::string& db = loc.connect.describe;
  auto conn = open_conn(loc, Role::admin, &counter);
  // relstore looks for its tables, and creates them, in the current schema. When that is
  // the schema named after the role, found through the default search_path's "$user",
  // and unqualified names resolve to an object_state further down (RelStorage's tables in
  // public), the role's schema was most likely made after the database: a new database
  // would be created in front of the existing one. A search_path that names its schemas
  // (one schema per tenant, public after them) is taken as meant.
  const Result resolved =
      query(*conn,
            "SELECT n.nspname::text, COALESCE(current_schema()::text, ''), "
            "(current_schema() = current_user AND "
            "btrim(split_part(current_setting('search_path'), ',', 1)) = '\"$user\"')::int "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.oid = to_regclass('object_state')");
  if (resolved.rows() == 1 && resolved.bytes(0, 0) != resolved.bytes(0, 1) &&
      resolved.int64(0, 2) == 1) {
    throw SchemaError(db + ": object_state is in schema " + resolved.bytes(0, 0) +
                      ", but relstore reads and creates its tables in the current schema, " +
                      resolved.bytes(0, 1) + " (the role's own, first on search_path); " +
                      "nothing was changed. To open the database in " + resolved.bytes(0, 0) +
                      ", put it first on search_path (ALTER ROLE … SET search_path, or the "
                      "connection parameter options=-csearch_path=" +
                      resolved.bytes(0, 0) + "); to create a new one in " + resolved.bytes(0, 1) +
                      ", name that schema in search_path.");
  }
  Inspection seen = inspect(*conn);

  if (!seen.relations.count("object_state")) {
    for (const char* t : {"transaction", "current_object", "blob_chunk"}) {
      if (seen.relations.count(t)) {
        throw SchemaError(db + " has a table " + t +
                          " but no object_state: not a complete RelStorage schema");
      }
    }
    const auto leftovers = relstore_only_tables(seen.relations);
    if (!leftovers.empty()) throw SchemaError(leftover_tables_message(db, leftovers));
    if (!may_change) {
      throw NoSchemaError(db + " has no relstore/RelStorage schema, and " +
                          (options.read_only ? "a read-only storage" : "create=false") +
                          " does not create one");
    }
    const bool keep_history = options.history != HistoryMode::free;
    in_schema_transaction(*conn, "creating the relstore schema in " + db, [&] {
      seen = inspect(*conn);  // another process may have created it while we waited
      if (seen.relations.count("object_state")) return;
      conn->simple(embedded_sql("sql/postgresql/schema_version.sql"), Context::schema);
      apply_migrations(*conn, keep_history, 0);
      install_functions(*conn, Inspection{}, keep_history, db);
    });
    seen = inspect(*conn);
  }

  const bool keep_history =
      seen.relations.count("transaction") || seen.relations.count("current_object");
  if (keep_history &&
      !(seen.relations.count("transaction") && seen.relations.count("current_object"))) {
    throw SchemaError(db +
                      " has only one of the tables transaction and current_object; the "
                      "schema is damaged");
  }
  if (options.history != HistoryMode::detect &&
      (options.history == HistoryMode::preserving) != keep_history) {
    throw SchemaError("the database " + db + " is " + mode_name(keep_history) +
                      ", but it was opened as " +
                      mode_name(options.history == HistoryMode::preserving) +
                      " (history=" + (keep_history ? "preserving" : "free") + " opens it)");
  }
  if (!seen.relations.count("blob_chunk")) throw SchemaError(db + " lacks the table blob_chunk");
  check_not_newer("postgresql", seen.version, db);
  const int newest = migrations_for("postgresql").back().version;

  const bool needs_work = !seen.relations.count("relstore_schema") || !seen.has_lock_row ||
                          seen.version < newest || !functions_current(seen, keep_history);
  if (may_change && needs_work) {
    // Before the transaction too, so that the refusal is not reported as a failed upgrade.
    check_functions_not_newer(seen, db);
    in_schema_transaction(*conn, "upgrading the schema of " + db, [&] {
      seen = inspect(*conn);
      // Again under the lock: a newer relstore may have upgraded the schema meanwhile,
      // and its functions must not be replaced by this release's.
      check_not_newer("postgresql", seen.version, db);
      if (!seen.relations.count("relstore_schema")) {
        // A RelStorage-created database: its schema is the baseline.
        conn->simple(embedded_sql("sql/postgresql/schema_version.sql"), Context::schema);
        record_migration(*conn, migrations_for("postgresql").front());
        seen.version = 1;
      }
      if (!seen.relations.count("commit_row_lock")) {
        conn->simple("CREATE TABLE commit_row_lock (tid BIGINT PRIMARY KEY NOT NULL)",
                     Context::schema);
      }
      conn->simple("INSERT INTO commit_row_lock (tid) VALUES (0) ON CONFLICT DO NOTHING",
                   Context::schema);
      apply_migrations(*conn, keep_history, seen.version);
      install_functions(*conn, seen, keep_history, db);
    });
    return {keep_history, true, !keep_history, true};  // migrated to the newest
  }
  // Without the right to upgrade, an older schema may lack the mirror: votes then do not
  // ask for its mode.
  const bool mirror = seen.relations.count("relstore_json_mirror") &&
                      seen.checksums.count("relstore_json_mirror_mode") &&
                      seen.checksums.count("relstore_finish_mirror");
  return {keep_history, mirror,
          !keep_history && seen.relations.count(backend::kDeletionMarkTable) > 0,
          seen.relations.count("relstore_conversion") > 0};
}

std::vector<int> applied_versions(Conn& conn) {
  std::vector<int> out;
  // In the current schema only, as inspect() looks: with a schema per tenant on
  // search_path, another schema's table must not answer for this one.
  if (!inspect(conn).relations.count("relstore_schema")) return out;
  const Result r = query(conn, "SELECT version FROM relstore_schema ORDER BY version");
  for (int i = 0; i < r.rows(); ++i) out.push_back(static_cast<int>(r.int64(i, 0)));
  return out;
}

void apply_one(Conn& conn, const Migration& m, bool keep_history) {
  in_schema_transaction(conn, "applying migration " + m.name + " to " + conn.describe(), [&] {
    conn.simple(embedded_sql("sql/postgresql/schema_version.sql"), Context::schema);
    // Another process may have applied it while we waited for the lock.
    const std::string check =
        "SELECT COUNT(*) FROM relstore_schema WHERE version = " + std::to_string(m.version);
    if (query(conn, check.c_str()).int64(0, 0) > 0) return;
    for (const auto& s : migration_statements(m.text, keep_history)) {
      conn.simple(s, Context::schema);
    }
    record_migration(conn, m);
  });
}

std::string schema_version(Conn& conn) {
  if (!inspect(conn).relations.count("relstore_schema")) {
    return "RelStorage (no relstore_schema table)";
  }
  return std::to_string(
      query(conn, "SELECT COALESCE(MAX(version), 0) FROM relstore_schema").int64(0, 0));
}

}  // namespace relstore::postgresql
