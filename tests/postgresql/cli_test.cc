// The relstore command line on PostgreSQL: the failures an operator meets first exit with
// code 1 and a clear message, change nothing, and never print the password (issue #3,
// acceptance); `relstore bench --json` reports round trips per transaction.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "postgresql/pg_support.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;

using testing::CliRun;

CliRun relstore(const std::string& args) { return testing::run_relstore(args); }

std::string quoted(const std::string& uri) { return "'" + uri + "'"; }

// The server URI with another password.
std::string with_password(const std::string& uri, const std::string& password) {
  const size_t colon = uri.find(':', uri.find("://") + 3);
  return uri.substr(0, colon + 1) + password + uri.substr(uri.find('@'));
}

TEST(PostgresqlCli, WrongPasswordExitsWithOne) {
  RELSTORE_NEED_POSTGRESQL();
  const CliRun r = relstore("info " + quoted(with_password(*pgtest::server_uri(), "N0tIt")));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("authentication failed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("N0tIt"), std::string::npos) << r.out;
}

TEST(PostgresqlCli, UnreachableServerExitsWithOne) {
  RELSTORE_NEED_POSTGRESQL();
  // Nothing listens on port 1.
  const CliRun r = relstore("info 'postgresql://relstore:S3cret@127.0.0.1:1/db'");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot connect"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("S3cret"), std::string::npos) << r.out;
}

// A misspelt libpq key in a config file's dsn is a usage error on the dsn's line, before
// anything connects (it was reported without the file and line).
TEST(PostgresqlCli, AnUnknownDsnKeyNamesTheConfigLine) {
  testing::TempDir d;
  const std::string conf = d.sub("convert.conf");
  std::ofstream(conf) << "<filestorage source>\n path " << d.sub("Data.fs")
                      << "\n</filestorage>\n<relstorage destination>\n<postgresql>\n"
                         " dsn dbname=zodb sslmdoe=require password=S3cret\n"
                         "</postgresql>\n</relstorage>\n";
  const CliRun r = relstore("convert --config " + quoted(conf));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(conf + ":6: unknown option 'sslmdoe'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("S3cret"), std::string::npos) << r.out;
}

TEST(PostgresqlCli, DatabaseInTheOtherModeExitsWithOne) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("cli_mode");
  ASSERT_EQ(relstore("migrate up " + quoted(db.uri("history=free"))).code, 0);
  const CliRun r = relstore("info " + quoted(db.uri("history=preserving")));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("history-free"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(":relstore@"), std::string::npos) << "the password shows: " << r.out;
}

TEST(PostgresqlCli, RoleWithoutCreateRightsExitsWithOneAndCreatesNothing) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("cli_nocreate");
  db.exec("REVOKE CREATE ON SCHEMA public FROM pg_database_owner");
  const CliRun r = relstore("migrate up " + quoted(db.uri()));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("permission denied"), std::string::npos) << r.out;
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
            "0");
}

// A dry run into a database with no schema yet counts what a real run would copy (which
// would create the schema) and creates nothing.
TEST(PostgresqlCli, ConvertDryRunIntoAnEmptyDatabaseCreatesNothing) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("cli_dry_run");
  testing::TempDir d;
  const std::string src = "file://" + d.sub("Data.fs");
  ASSERT_EQ(relstore("sample --objects 30 " + src).code, 0);
  const CliRun r = relstore("convert --dry-run " + src + " " + quoted(db.uri()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("would copy"), std::string::npos) << r.out;
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
            "0");
}

TEST(PostgresqlCli, MigrateStatusAfterCreation) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("cli_migrate");
  // An empty database: every migration pending, and nothing created by asking.
  const CliRun before = relstore("migrate status " + quoted(db.uri()));
  EXPECT_EQ(before.code, 0) << before.out;
  EXPECT_NE(before.out.find("pending        0001_baseline"), std::string::npos) << before.out;
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
            "0");
  const CliRun dry = relstore("migrate up --dry-run " + quoted(db.uri()));
  EXPECT_EQ(dry.code, 0) << dry.out;
  EXPECT_NE(dry.out.find("would apply 0001_baseline"), std::string::npos) << dry.out;
  ASSERT_EQ(relstore("migrate up " + quoted(db.uri())).code, 0);
  const CliRun after = relstore("migrate status " + quoted(db.uri()));
  EXPECT_EQ(after.code, 0) << after.out;
  EXPECT_NE(after.out.find("postgresql"), std::string::npos) << after.out;
}

// PostgreSQL applies pending migrations when a writable storage opens; `migrate up` still
// names what it applied (it said "nothing to apply" while applying them).
TEST(PostgresqlCli, MigrateUpNamesWhatOpeningApplied) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("cli_migrate_names");
  open_storage(db.uri("history=free"))->close();
  db.exec("DROP TABLE relstore_hf_deletion; DELETE FROM relstore_schema WHERE version = 4");
  const CliRun dry = relstore("migrate up --dry-run " + quoted(db.uri()));
  EXPECT_NE(dry.out.find("would apply 0004_hf_deletions"), std::string::npos) << dry.out;
  const CliRun r = relstore("migrate up " + quoted(db.uri()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("applied 0004_hf_deletions"), std::string::npos) << r.out;
  EXPECT_EQ(db.scalar("SELECT MAX(version) FROM relstore_schema"), "7");
  const CliRun again = relstore("migrate up " + quoted(db.uri()));
  EXPECT_NE(again.out.find("nothing to apply"), std::string::npos) << again.out;
}

TEST(PostgresqlCli, BenchJsonReportsRoundTripsPerTransaction) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("cli_bench");
  const CliRun r = relstore("bench --json --transactions 5 --objects-per-txn 20 --concurrency 1 " +
                            quoted(db.uri()));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto figures = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& f : figures) {
    EXPECT_EQ(f["backend"], "postgresql");
    if (f["test"] == "add" || f["test"] == "update") {
      // The figure itself (bench's transactions also allocate OIDs and load objects) is
      // bounded in postgresql_dialect's round-trip tests; here it must be reported.
      ASSERT_TRUE(f.contains("round_trips_per_txn")) << f.dump();
      EXPECT_GT(f["round_trips_per_txn"].get<double>(), 0.0) << f.dump();
      seen = true;
    }
  }
  EXPECT_TRUE(seen) << r.out;
}

}  // namespace
}  // namespace relstore
