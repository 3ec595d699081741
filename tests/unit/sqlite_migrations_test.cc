// Migrating an old SQLite database to the newest schema gives the same catalog as a fresh
// install (style.md habit 7), and migrate status/up report and apply exactly what is due.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <regex>

#include "backend/registry.h"
#include "embedded_sql.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/storage.h"
#include "schema/migrations.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

// type|name|tbl_name|sql with white space folded, sorted: what the schema is.
std::vector<std::string> catalog(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master "
                     "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
                     -1, &s, nullptr);
  std::vector<std::string> out;
  static const std::regex kSpace("\\s+");
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < 4; ++c) {
      row += reinterpret_cast<const char*>(sqlite3_column_text(s, c));
      row += '|';
    }
    out.push_back(std::regex_replace(row, kSpace, " "));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// Builds the database an older relstore would have left: only migration 1 applied.
void make_baseline(const std::string& dir, bool keep_history) {
  std::filesystem::create_directories(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/main.sqlite3").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
  const std::string version_table(embedded_sql("sql/sqlite/schema_version.sql"));
  ASSERT_EQ(sqlite3_exec(db, version_table.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  const std::vector<Migration> all = migrations_for("sqlite");
  const Migration& baseline = all.front();
  for (const auto& stmt : migration_statements(baseline.text, keep_history)) {
    ASSERT_EQ(sqlite3_exec(db, stmt.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db) << "\n"
        << stmt;
  }
  ASSERT_EQ(
      sqlite3_exec(db, "INSERT INTO relstore_schema VALUES (1, 'baseline', '2026-01-01T00:00:00Z')",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
}

class SqliteMigrations : public ::testing::TestWithParam<bool> {};

TEST_P(SqliteMigrations, BaselinePlusMigrationsEqualsAFreshInstall) {
  const bool hp = GetParam();
  TempDir d;
  const std::string query = hp ? "?history=preserving" : "?history=free";
  open_storage("sqlite://" + d.sub("fresh") + query)->close();
  make_baseline(d.sub("old"), hp);
  const auto applied = migrate_up("sqlite://" + d.sub("old") + query, false);
  EXPECT_EQ(applied.size(), migrations_for("sqlite").size() - 1);
  EXPECT_EQ(catalog(d.sub("old/main.sqlite3")), catalog(d.sub("fresh/main.sqlite3")));
  EXPECT_TRUE(migration_status("sqlite://" + d.sub("old")).pending.empty());
}

TEST_P(SqliteMigrations, StatusAndDryRunChangeNothing) {
  TempDir d;
  make_baseline(d.sub("old"), GetParam());
  const auto before = catalog(d.sub("old/main.sqlite3"));
  const auto st = migration_status("sqlite://" + d.sub("old"));
  EXPECT_EQ(st.applied, std::vector<int>{1});
  EXPECT_EQ(st.newest, migrations_for("sqlite").back().version);
  EXPECT_EQ(st.pending.size(), migrations_for("sqlite").size() - 1);
  migrate_up("sqlite://" + d.sub("old"), true);
  EXPECT_EQ(catalog(d.sub("old/main.sqlite3")), before);
  EXPECT_NE(format_migration_status(st).find("current        1"), std::string::npos);
}

TEST(SqliteMigrationsStatus, AFreshDatabaseHasNothingPending) {
  TempDir d;
  open_storage("sqlite://" + d.sub("db"))->close();
  const auto st = migration_status("sqlite://" + d.sub("db"));
  EXPECT_TRUE(st.pending.empty());
  EXPECT_EQ(st.applied.back(), st.newest);
  EXPECT_TRUE(migrate_up("sqlite://" + d.sub("db"), false).empty());
}

// A database a newer relstore made (a migration this one does not know) is refused before
// anything is changed; `migrate status` reports it rather than failing.
TEST(SqliteMigrationsStatus, ANewerSchemaIsRefusedAndReported) {
  TempDir d;
  const std::string uri = "sqlite://" + d.sub("db");
  open_storage(uri)->close();
  const int newest = migrations_for("sqlite").back().version;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(d.sub("db/main.sqlite3").c_str(), &db), SQLITE_OK);
  const std::string insert = "INSERT INTO relstore_schema VALUES (" + std::to_string(newest + 1) +
                             ", 'future', '2027-01-01T00:00:00Z')";
  ASSERT_EQ(sqlite3_exec(db, insert.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto before = catalog(d.sub("db/main.sqlite3"));
  try {
    open_storage(uri);
    ADD_FAILURE() << "opened";
  } catch (const NewerSchemaError& e) {
    EXPECT_EQ(e.version(), newest + 1);
    EXPECT_NE(std::string(e.what()).find("newer than this relstore knows"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(migrate_up(uri, false), NewerSchemaError);
  EXPECT_THROW(migrate_up(uri, true), NewerSchemaError);  // --dry-run too
  const auto st = migration_status(uri);
  EXPECT_EQ(st.applied.back(), newest + 1);
  EXPECT_NE(format_migration_status(st).find("the database is newer than this relstore"),
            std::string::npos)
      << format_migration_status(st);
  EXPECT_EQ(catalog(d.sub("db/main.sqlite3")), before);
}

// Processes running `migrate up` at once each saw a migration pending; under the write lock
// one already recorded is skipped rather than run again over its own tables.
TEST(SqliteMigrationsStatus, AMigrationAppliedMeanwhileIsSkipped) {
  TempDir d;
  const StorageUri uri = StorageUri::parse("sqlite://" + d.sub("db"));
  open_storage(uri, uri.options())->close();
  auto adapter = backend::open_adapter(uri, uri.options());
  for (const Migration& m : migrations_for("sqlite")) EXPECT_NO_THROW(adapter->apply_migration(m));
  EXPECT_EQ(migration_status(uri.text()).applied.size(), migrations_for("sqlite").size());
}

// `create=false` in the URI holds for `migrate up` too: a mistyped path is an error, not a
// new database.
TEST(SqliteMigrationsStatus, MigrateUpKeepsCreateFalse) {
  TempDir d;
  EXPECT_THROW(migrate_up("sqlite://" + d.sub("typo") + "?create=false", false), SchemaError);
  EXPECT_FALSE(std::filesystem::exists(d.sub("typo")));
  // Without it, creating the schema applies every migration, and says so.
  EXPECT_EQ(migrate_up("sqlite://" + d.sub("new"), false).size(), migrations_for("sqlite").size());
}

INSTANTIATE_TEST_SUITE_P(Modes, SqliteMigrations, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "hp" : "hf"; });

}  // namespace
}  // namespace relstore
