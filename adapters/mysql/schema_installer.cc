#include "adapters/mysql/schema_installer.h"

#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "adapters/mysql/named_lock.h"
#include "adapters/mysql/procedures.h"
#include "backend/deletion_mark.h"
#include "embedded_sql.h"
#include "relstore/errors.h"
#include "schema/migrations.h"

namespace relstore::mysql {
namespace {

// Every table and view RelStorage or relstore creates, the migrations' included: a
// creation that failed part-way must be able to remove them, and finish next time.
const std::set<std::string> kOurTables = {"commit_row_lock",
                                          "new_oid",
                                          "pack_object",
                                          "transaction",
                                          "object_state",
                                          "blob_chunk",
                                          "current_object",
                                          "object_ref",
                                          "object_refs_added",
                                          "pack_state",
                                          "pack_state_tid",
                                          "current_object_state",
                                          "relstore_schema",
                                          "commit_lock",
                                          "pack_lock",
                                          "object_json",
                                          "object_json_error",
                                          "relstore_json_mirror",
                                          "relstore_json_mirror_lock",
                                          "newt",
                                          "relstore_hf_deletion",
                                          "relstore_conversion"};

struct Table {
  std::string type;    // BASE TABLE or VIEW
  std::string engine;  // InnoDB, MyISAM, … (empty for views)
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::map<std::string, Table> table_names(Connection& conn) {
  std::map<std::string, Table> out;
  conn.batch(
      "SELECT TABLE_NAME, TABLE_TYPE, COALESCE(ENGINE, '') FROM information_schema.TABLES "
      "WHERE TABLE_SCHEMA = DATABASE()",
      1,
      [&](Rows& r) {
        while (r.next()) out[lower(r.bytes(0))] = {r.bytes(1), r.bytes(2)};
      },
      Context::other);
  return out;
}

bool has_migration(Connection& conn, int version) {
  return conn.query_int("SELECT COUNT(*) FROM relstore_schema WHERE version = " +
                        std::to_string(version)) > 0;
}

void record_migration(Connection& conn, const Migration& m) {
  conn.exec("INSERT IGNORE INTO relstore_schema (version, name, applied_at) VALUES (" +
            std::to_string(m.version) + ", '" + m.name +
            "', DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ'))");
}

const char* mode_name(bool keep_history) {
  return keep_history ? "history-preserving" : "history-free";
}

// Serialises schema work between processes opening the same database at once. The lock
// name is hashed because MySQL limits it to 64 characters; it ends with the session.
void take_install_lock(Connection& conn) {
  if (!get_named_lock(conn, "relstore", 60, Context::read)) {
    throw StorageError(conn.params().describe +
                       ": another process kept installing the schema for 60 seconds");
  }
}

// Drops what a failed creation made, keeping what was there before; errors are ignored
// (a user without DROP rights keeps the leftovers, and the original error is reported).
void remove_created(Connection& conn, const std::map<std::string, Table>& before,
                    const std::vector<std::string>& procedures) {
  // Each drop on its own: one refused (DROP is a privilege of its own) must not keep the
  // others, the procedures among them, from going.
  const auto quietly = [&](const std::string& sql) {
    try {
      conn.exec(sql);
    } catch (const StorageError&) {
    }
  };
  for (const auto& p : procedures) quietly("DROP PROCEDURE IF EXISTS " + p);
  quietly("SET FOREIGN_KEY_CHECKS = 0");
  try {
    for (const auto& [name, table] : table_names(conn)) {
      if (before.count(name) || !kOurTables.count(name)) continue;
      quietly((table.type == "VIEW" ? "DROP VIEW IF EXISTS \"" : "DROP TABLE IF EXISTS \"") + name +
              "\"");
    }
  } catch (const StorageError&) {
  }
  quietly("SET FOREIGN_KEY_CHECKS = 1");
}

// Creates (or completes, after an interrupted creation) the newest schema. Procedures
// come first: they need CREATE ROUTINE, the privilege a user is most likely to lack, and
// failing there leaves nothing to undo.
void create_schema(Connection& conn, const ServerInfo& server, bool keep_history,
                   const std::map<std::string, Table>& before) {
  std::vector<std::string> created;
  try {
    install_procedures(conn, server, keep_history, created);
    const std::string what =
        "creating the schema (needs CREATE, INDEX, REFERENCES and "
        "CREATE VIEW privileges)";
    conn.exec(trim_statements(embedded_sql("sql/mysql/schema_version.sql")), Context::other, what);
    for (const Migration& m : migrations_for("mysql")) {
      if (has_migration(conn, m.version)) continue;
      for (const std::string& stmt : migration_statements(m.text, keep_history)) {
        conn.exec(trim_statements(stmt), Context::other, what);
      }
      record_migration(conn, m);
    }
  } catch (...) {
    remove_created(conn, before, created);
    throw;
  }
}

bool has_column(Connection& conn, const char* table, const char* column) {
  return conn.query_int(std::string("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE "
                                    "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '") +
                        table + "' AND COLUMN_NAME = '" + column + "'") > 0;
}

// Brings a database created by RelStorage to what relstore needs, without touching
// object data.
void adopt_schema(Connection& conn, const std::map<std::string, Table>& tables, bool keep_history) {
  const std::string what =
      "adopting a RelStorage database (needs CREATE for the table relstore_schema, and ALTER "
      "for a RelStorage 2.x database)";
  if (keep_history && has_column(conn, "transaction", "empty")) {
    // RelStorage 2.x named the column `empty`; RelStorage 3 renames it the same way.
    // Quoted: EMPTY is a reserved word from MySQL 8.0.4 on (not in MariaDB).
    conn.exec(
        "ALTER TABLE \"transaction\" CHANGE \"empty\" is_empty BOOLEAN NOT NULL DEFAULT FALSE",
        Context::other, what);
  }
  conn.exec("INSERT IGNORE INTO commit_row_lock (tid) VALUES (0)", Context::other, what);
  if (!tables.count("relstore_schema")) {
    conn.exec(trim_statements(embedded_sql("sql/mysql/schema_version.sql")), Context::other, what);
    record_migration(conn, migrations_for("mysql").front());
  }
}

}  // namespace

ServerInfo server_info(Connection& conn) {
  ServerInfo s;
  conn.batch(
      "SELECT VERSION(), @@max_allowed_packet", 1,
      [&](Rows& r) {
        if (!r.next()) return;
        s.version = r.bytes(0);
        s.max_allowed_packet = r.int64(1);
      },
      Context::other);
  s.mariadb = s.version.find("MariaDB") != std::string::npos;
  std::sscanf(s.version.c_str(), "%d.%d", &s.major, &s.minor);
  // NOWAIT on shared locks: MariaDB 10.3, MySQL 8.0.1.
  const bool supported =
      s.mariadb ? (s.major > 10 || (s.major == 10 && s.minor >= 3)) : s.major >= 8;
  if (!supported) {
    throw SchemaError("the server runs " + s.version +
                      "; relstore needs MariaDB 10.3 or later, or MySQL 8.0 or later");
  }
  if (!s.mariadb) {
    // MySQL only: engines CREATE TABLE refuses, temporary tables too.
    conn.batch(
        "SELECT @@global.disabled_storage_engines", 1,
        [&](Rows& r) {
          if (r.next() && !r.is_null(0)) s.disabled_engines = r.bytes(0);
        },
        Context::other);
  }
  return s;
}

void install_schema(Settings& settings, const StorageOptions& options) {
  const bool may_create = options.create && !options.read_only;
  const std::string& where = settings.connect.describe;
  auto conn = open_connection(settings, Role::admin, nullptr);
  settings.server = server_info(*conn);
  take_install_lock(*conn);
  auto tables = table_names(*conn);

  const bool interrupted = tables.count("relstore_schema") && !has_migration(*conn, 1);
  // Migration 1 recorded means object_state was made: without it, RelStorage's tables were
  // dropped and relstore's left (an interrupted creation never recorded migration 1).
  if (!tables.count("object_state") && tables.count("relstore_schema") && !interrupted) {
    throw SchemaError(leftover_tables_message(where, relstore_only_tables(tables)));
  }
  if (!tables.count("object_state") || interrupted) {
    for (const auto& [name, table] : tables) {
      if (!kOurTables.count(name) && !tables.count("object_state")) {
        throw SchemaError(where + " has tables (" + name +
                          ", …) but no object_state: it is "
                          "not a relstore/RelStorage database");
      }
    }
    if (!may_create) throw NoSchemaError(where + " has no relstore/RelStorage schema");
    // An interrupted creation is completed in the mode it began in.
    const bool keep_history = tables.count("transaction")    ? true
                              : tables.count("object_state") ? false
                                                             : options.history != HistoryMode::free;
    if (options.history != HistoryMode::detect &&
        (options.history == HistoryMode::preserving) != keep_history) {
      throw SchemaError(where + " holds a partly created " + mode_name(keep_history) +
                        " schema, but it was opened as " +
                        mode_name(options.history == HistoryMode::preserving));
    }
    create_schema(*conn, settings.server, keep_history, tables);
    tables = table_names(*conn);
  }

  // Before anything is changed (procedures included), and before the checks of tables a
  // newer release may have changed: its schema is not this one's to write.
  if (tables.count("relstore_schema")) {
    check_not_newer(
        "mysql",
        static_cast<int>(conn->query_int("SELECT COALESCE(MAX(version), 0) FROM relstore_schema")),
        where);
  }
  const bool keep_history = tables.count("transaction") || tables.count("current_object");
  if (keep_history && !(tables.count("transaction") && tables.count("current_object"))) {
    throw SchemaError(where +
                      " has only one of the tables transaction and current_object; "
                      "the schema is damaged");
  }
  if (options.history != HistoryMode::detect &&
      (options.history == HistoryMode::preserving) != keep_history) {
    throw SchemaError(where + " is " + mode_name(keep_history) + ", but it was opened as " +
                      mode_name(options.history == HistoryMode::preserving) +
                      " (history=" + (keep_history ? "preserving" : "free") + " opens it)");
  }
  for (const char* required : {"commit_row_lock", "blob_chunk", "new_oid"}) {
    if (!tables.count(required)) throw SchemaError(where + " lacks the table " + required);
  }
  for (const auto& [name, table] : tables) {
    if (kOurTables.count(name) && table.type != "VIEW" && lower(table.engine) != "innodb") {
      throw SchemaError(where + ": table " + name + " uses the " + table.engine +
                        " engine; relstore, like RelStorage 3, needs InnoDB (ALTER TABLE " + name +
                        " ENGINE = InnoDB)");
    }
  }
  if (may_create) {
    // A refused adoption leaves the RelStorage database as it found it: without the
    // procedures it had just installed, and without relstore_schema.
    std::vector<std::string> created;
    try {
      install_procedures(*conn, settings.server, keep_history, created);
      if (!tables.count("relstore_schema") ||
          conn->query_int("SELECT COUNT(*) FROM commit_row_lock WHERE tid = 0") == 0 ||
          (keep_history && has_column(*conn, "transaction", "empty"))) {
        adopt_schema(*conn, tables, keep_history);
      }
    } catch (...) {
      remove_created(*conn, tables, created);
      throw;
    }
  }
  settings.keep_history = keep_history;
  const auto names = table_names(*conn);
  settings.has_deletion_mark = !keep_history && names.count(backend::kDeletionMarkTable);
  settings.has_conversion_note = names.count("relstore_conversion") > 0;
}

std::vector<int> applied_versions(Connection& conn) {
  std::vector<int> out;
  if (!table_names(conn).count("relstore_schema")) return out;
  conn.batch(
      "SELECT version FROM relstore_schema ORDER BY version", 1,
      [&](Rows& r) {
        while (r.next()) out.push_back(static_cast<int>(r.int64(0)));
      },
      Context::other);
  return out;
}

void apply_one(Connection& conn, const Migration& m, bool keep_history) {
  take_install_lock(conn);
  conn.exec(trim_statements(embedded_sql("sql/mysql/schema_version.sql")));
  if (has_migration(conn, m.version)) return;  // another process was first
  for (const std::string& stmt : migration_statements(m.text, keep_history)) {
    conn.exec(trim_statements(stmt), Context::other, "migration " + m.name);
  }
  record_migration(conn, m);
}

std::string schema_version(Connection& conn) {
  if (!table_names(conn).count("relstore_schema")) return "RelStorage (no relstore_schema table)";
  return std::to_string(conn.query_int("SELECT MAX(version) FROM relstore_schema"));
}

}  // namespace relstore::mysql
