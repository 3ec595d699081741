// Creating, detecting, adopting and refusing PostgreSQL databases (issue #3, part 2).
#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "backend/registry.h"
#include "postgresql/pg_support.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/storage.h"
#include "schema/migrations.h"
#include "schema/server_code.h"
#include "support/commits.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;

// The columns of relstore's and RelStorage's tables (not views), one line per column.
std::string columns_of(TestDatabase& db) {
  return db.scalar(
      "SELECT string_agg(table_name || '.' || column_name || ' ' || data_type || ' ' || "
      "is_nullable || ' ' || COALESCE(column_default, '-'), E'\\n' "
      "ORDER BY table_name, ordinal_position) FROM information_schema.columns "
      "WHERE table_schema = 'public' AND table_name <> 'relstore_schema' AND table_name IN "
      "(SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')");
}

std::string count(TestDatabase& db, const std::string& sql) { return db.scalar(sql); }

TEST(PostgresqlSchema, NewDatabaseIsHistoryPreservingWithRelStoragesObjects) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_new");
  auto st = open_storage(db.uri());
  EXPECT_TRUE(st->keep_history());
  for (const char* table : {"commit_row_lock", "transaction", "object_state", "current_object",
                            "blob_chunk", "object_ref", "object_refs_added", "pack_object",
                            "pack_state", "pack_state_tid", "relstore_schema"}) {
    EXPECT_EQ(
        count(db, std::string("SELECT COUNT(*) FROM pg_tables WHERE tablename = '") + table + "'"),
        "1")
        << table;
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM pg_class WHERE relname = 'zoid_seq' AND relkind = 'S'"),
            "1");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM pg_views WHERE viewname = 'current_object_state'"),
            "1");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM pg_trigger WHERE tgname = 'blob_chunk_delete'"), "1");
  EXPECT_EQ(db.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                      "WHERE attrelid = 'blob_chunk'::regclass AND attname = 'chunk'"),
            "oid");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM commit_row_lock WHERE tid = 0"), "1");
  EXPECT_EQ(db.scalar("SELECT convert_from(username, 'UTF8') || '/' || "
                      "convert_from(description, 'UTF8') FROM \"transaction\" WHERE tid = 0"),
            "system/special transaction for object creation");
  EXPECT_EQ(st->info().schema_version, "7");
}

TEST(PostgresqlSchema, HistoryFreeOnRequestAndDetectedLater) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_hf");
  open_storage(db.uri("history=free"))->close();
  EXPECT_EQ(count(db,
                  "SELECT COUNT(*) FROM pg_tables WHERE tablename IN "
                  "('transaction', 'current_object', 'pack_state')"),
            "0");
  EXPECT_FALSE(open_storage(db.uri())->keep_history());
}

TEST(PostgresqlSchema, OtherModeIsAClearErrorAndChangesNothing) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase hf("schema_mode_hf");
  TestDatabase hp("schema_mode_hp");
  open_storage(hf.uri("history=free"))->close();
  open_storage(hp.uri("history=preserving"))->close();
  const std::string before = columns_of(hf);
  try {
    open_storage(hf.uri("history=preserving"));
    FAIL() << "opened a history-free database as history-preserving";
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("history-free"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("history=free"), std::string::npos) << e.what();
  }
  EXPECT_THROW(open_storage(hp.uri("history=free")), SchemaError);
  EXPECT_EQ(columns_of(hf), before);
}

TEST(PostgresqlSchema, ReadOnlyStorageOnAnEmptyDatabaseCreatesNothing) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_ro");
  EXPECT_THROW(open_storage(db.uri("read_only=true")), SchemaError);
  EXPECT_THROW(open_storage(db.uri("create=false")), SchemaError);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
            "0");
}

// The schema is installed in one transaction: a role that may not create tables gets a
// clear error and an untouched database.
TEST(PostgresqlSchema, RoleWithoutCreateRightsGetsAClearErrorAndNothingHalfCreated) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_nocreate");
  // The owner gives up its own CREATE right on the public schema.
  db.exec("REVOKE CREATE ON SCHEMA public FROM pg_database_owner");
  try {
    open_storage(db.uri());
    FAIL() << "created a schema without CREATE rights";
  } catch (const SchemaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("permission denied"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was changed"), std::string::npos) << what;
    EXPECT_EQ(what.find(":relstore@"), std::string::npos) << "the password shows: " << what;
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
            "0");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace"),
            "0");
}

class RelStorageCreated : public ::testing::Test {
 protected:
  void load_fixture(TestDatabase& db) {
    std::ifstream in(std::string(RELSTORE_SOURCE_DIR) +
                     "/tests/fixtures/relstorage_postgresql_hp.sql");
    std::stringstream sql;
    sql << in.rdbuf();
    db.exec(sql.str());
  }
};

// An old RelStorage database: mode detected from the tables, the "empty" column renamed,
// the missing commit_row_lock row inserted, its data untouched.
TEST_F(RelStorageCreated, OpensAsIsAndIsUpgraded) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_relstorage");
  load_fixture(db);
  auto st = open_storage(db.uri());
  EXPECT_TRUE(st->keep_history());
  EXPECT_EQ(count(db,
                  "SELECT COUNT(*) FROM information_schema.columns "
                  "WHERE table_name = 'transaction' AND column_name = 'is_empty'"),
            "1");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM commit_row_lock WHERE tid = 0"), "1");
  EXPECT_EQ(db.scalar("SELECT string_agg(version || ' ' || name, ',' ORDER BY version) "
                      "FROM relstore_schema"),
            "1 baseline,2 transaction_is_empty,3 json_mirror,4 hf_deletions,"
            "5 mirror_trigger_rights,6 reset_on_truncate,7 unfinished_conversion");
  auto inst = st->new_instance();
  const auto r = inst->load(Oid(0));
  EXPECT_EQ(r.data, "hello");
  EXPECT_EQ(r.tid, Tid(0x03dfd11700000000ULL));

  TransactionMetaData txn{"bob", "second", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(0), r.tid, "world", txn);
  inst->tpc_vote(txn);
  const Tid tid = inst->tpc_finish(txn);
  EXPECT_GT(tid, r.tid);
  EXPECT_EQ(inst->load_serial(Oid(0), r.tid), "hello");
  EXPECT_GT(inst->new_oid(), Oid(16));  // zoid_seq was at block 1
}

// `migrate up` with create=false upgrades a RelStorage-created database (recording its
// schema as the baseline) rather than running the baseline's DDL again over its tables.
TEST_F(RelStorageCreated, MigrateUpWithCreateFalseUpgradesIt) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_relstorage_up");
  load_fixture(db);
  const std::string uri = db.uri("create=false");
  EXPECT_EQ(migrate_up(uri, false).size(), migrations_for("postgresql").size());
  EXPECT_TRUE(migration_status(uri).pending.empty());
  EXPECT_EQ(open_storage(uri)->new_instance()->load(Oid(0)).data, "hello");
}

// An application whose role was granted rights on RelStorage's tables only keeps
// committing after relstore migrated the database: the mirror's trigger on object_state
// reads relstore's own table with its owner's rights, not the committer's.
TEST_F(RelStorageCreated, ARoleWithRightsOnRelStoragesTablesOnlyStillCommits) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_app_role");
  if (db.scalar("SELECT rolcreaterole FROM pg_roles WHERE rolname = current_user") != "t") {
    if (pgtest::server_required()) FAIL() << "the test role needs CREATEROLE";
    GTEST_SKIP() << "the test role cannot create the application role (no CREATEROLE)";
  }
  const std::string role = db.name() + "_app";
  pgtest::exec_on_server("DROP ROLE IF EXISTS " + role);  // a failed run's
  load_fixture(db);
  open_storage(db.uri())->close();  // migrates: the mirror's tables and trigger
  db.exec("CREATE ROLE " + role + " NOLOGIN; GRANT " + role + " TO CURRENT_USER; " +
          "GRANT SELECT, INSERT, UPDATE, DELETE ON commit_row_lock, \"transaction\", "
          "object_state, current_object TO " +
          role);
  for (const char* mode : {"off", "follow"}) {
    db.exec(std::string("UPDATE relstore_json_mirror SET mode = '") + mode + "'");
    const std::string tid = mode == std::string("off") ? "1000" : "1001";
    db.exec("BEGIN; SET LOCAL ROLE " + role + "; INSERT INTO \"transaction\" (tid, username, " +
            "description) VALUES (" + tid + ", 'app', 'by the application role'); " +
            "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) VALUES (" +
            tid + ", " + tid + ", 0, NULL, 1, 'x'); COMMIT");
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM object_state WHERE tid = " + tid), "1") << mode;
  }
  db.exec("DROP OWNED BY " + role);
  pgtest::exec_on_server("DROP ROLE " + role);
}

// RelStorage's tables in public, and a schema named after the role created since (so it
// comes first on the default search_path): relstore must not create an empty database in
// front of the real one, which RelStorage's unqualified queries would then find too.
TEST_F(RelStorageCreated, TablesFurtherDownTheSearchPathAreNotHidden) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_search_path");
  load_fixture(db);
  db.exec("CREATE SCHEMA \"" + db.scalar("SELECT current_user") + "\" AUTHORIZATION CURRENT_USER");
  try {
    open_storage(db.uri());
    FAIL() << "opened with a schema of its own in front of RelStorage's";
  } catch (const SchemaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("object_state is in schema public"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was changed"), std::string::npos) << what;
  }
  EXPECT_EQ(count(db,
                  "SELECT COUNT(*) FROM pg_class WHERE relnamespace = (SELECT oid FROM "
                  "pg_namespace WHERE nspname = current_user)"),
            "0");
  // With public first, the database opens as RelStorage left it.
  auto st = open_storage(db.uri("options=-csearch_path%3Dpublic"));
  EXPECT_EQ(st->new_instance()->load(Oid(0)).data, "hello");
  // A search_path that names its schemas (a schema per tenant, public after it) is taken
  // as meant: a new database in the tenant's schema.
  db.exec("CREATE SCHEMA tenant");
  auto tenant = open_storage(db.uri("options=-csearch_path%3Dtenant,public"));
  EXPECT_THROW(tenant->new_instance()->load(Oid(0)), POSKeyError);
  EXPECT_EQ(count(db,
                  "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'tenant' AND "
                  "tablename = 'object_state'"),
            "1");
}

// With a schema per tenant on search_path, the versions are the current schema's: a
// RelStorage-made tenant (no relstore_schema) with relstore's public schema behind it is
// not reported as migrated.
TEST(PostgresqlSchema, MigrationStatusReadsTheCurrentSchemaOnly) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_tenant_versions");
  open_storage(db.uri())->close();
  db.exec("CREATE SCHEMA tenant");
  const std::string tenant = db.uri("options=-csearch_path%3Dtenant,public");
  open_storage(tenant)->close();
  db.exec("DROP TABLE tenant.relstore_schema");
  const MigrationStatus status = migration_status(tenant + "&read_only=true");
  EXPECT_TRUE(status.applied.empty());
  EXPECT_EQ(status.pending.size(), static_cast<size_t>(status.newest));
  EXPECT_EQ(open_storage(tenant + "&read_only=true")->info().schema_version,
            "RelStorage (no relstore_schema table)");
}

// Migrating from the first migration to the last (here: adopting RelStorage's schema as
// the baseline, then upgrading it) gives the same tables as a fresh install.
TEST_F(RelStorageCreated, UpgradedColumnsEqualAFreshInstall) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase old_db("schema_upgraded");
  TestDatabase fresh("schema_fresh");
  load_fixture(old_db);
  open_storage(old_db.uri())->close();
  open_storage(fresh.uri("history=preserving"))->close();
  // The fixture, like RelStorage 2.x, has no current_object_state view and no pack_object
  // indexes; the tables and their columns must match exactly.
  EXPECT_EQ(columns_of(old_db), columns_of(fresh));
  // The objects of relstore's own migrations: the mirror's indexes, view and trigger, and
  // relstore's functions.
  const std::string objects =
      "SELECT string_agg(x, E'\\n' ORDER BY x) FROM ("
      "SELECT indexdef AS x FROM pg_indexes WHERE tablename LIKE 'object\\_json%' "
      "OR tablename = 'relstore_json_mirror' "
      "UNION ALL SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname LIKE 'relstore\\_%' "
      "UNION ALL SELECT viewname || ' ' || definition FROM pg_views WHERE viewname = 'newt' "
      "UNION ALL SELECT oid::regprocedure::text || ' ' || md5(prosrc) FROM pg_proc "
      "WHERE proname LIKE 'relstore\\_%') s";
  EXPECT_NE(fresh.scalar(objects).find("object_json_state"), std::string::npos);
  EXPECT_EQ(old_db.scalar(objects), fresh.scalar(objects));
}

TEST(PostgresqlSchema, FunctionsAreInstalledWithAChecksumAndReplacedWhenChanged) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_functions");
  open_storage(db.uri())->close();
  const std::string checksums =
      "SELECT string_agg(proname || '=' || obj_description(oid, 'pg_proc'), ',' ORDER BY proname) "
      "FROM pg_proc WHERE proname LIKE 'relstore\\_%'";
  const std::string installed = db.scalar(checksums);
  EXPECT_NE(installed.find("relstore_finish=relstore g" + std::to_string(kServerCodeGeneration) +
                           " md5 "),
            std::string::npos)
      << installed;
  EXPECT_NE(installed.find("relstore_lock_and_detect="), std::string::npos) << installed;
  // Someone replaced one: the next open puts relstore's text back.
  db.exec(
      "CREATE OR REPLACE FUNCTION relstore_later_than(p_new BIGINT, p_last BIGINT) "
      "RETURNS BIGINT LANGUAGE sql AS 'SELECT 0::BIGINT'; "
      "COMMENT ON FUNCTION relstore_later_than(BIGINT, BIGINT) IS 'changed'");
  open_storage(db.uri())->close();
  EXPECT_EQ(db.scalar(checksums), installed);
  EXPECT_EQ(db.scalar("SELECT relstore_later_than(5, 9)"), "10");
}

// Functions a newer relstore installed (a later generation, same schema version) are not
// replaced by this one's older text: a writable open is refused, changing nothing; a
// read-only one works. Those of relstore releases before generations are replaced.
TEST(PostgresqlSchema, FunctionsOfANewerRelstoreAreNotReplaced) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_functions_newer");
  open_storage(db.uri())->close();
  const std::string comment =
      "SELECT obj_description('relstore_later_than(BIGINT, BIGINT)'::regprocedure, 'pg_proc')";
  const std::string ours = db.scalar(comment);
  const std::string newer = "relstore g" + std::to_string(kServerCodeGeneration + 1) + " md5 x";
  db.exec("COMMENT ON FUNCTION relstore_later_than(BIGINT, BIGINT) IS '" + newer + "'");
  try {
    open_storage(db.uri());
    FAIL() << "replaced a newer relstore's functions";
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("newer relstore"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("upgrading"), std::string::npos) << e.what();
  }
  EXPECT_EQ(db.scalar(comment), newer);
  EXPECT_NO_THROW(open_storage(db.uri("read_only=true"))->new_instance()->last_transaction());
  db.exec("COMMENT ON FUNCTION relstore_later_than(BIGINT, BIGINT) IS 'relstore md5 older'");
  open_storage(db.uri())->close();
  EXPECT_EQ(db.scalar(comment), ours);
}

// A database a newer relstore made is refused before anything is changed (functions
// included); `migrate status` reports it rather than failing.
TEST(PostgresqlSchema, ANewerSchemaIsRefusedAndReported) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_newer");
  open_storage(db.uri())->close();
  const int newest = migrations_for("postgresql").back().version;
  db.exec("INSERT INTO relstore_schema VALUES (" + std::to_string(newest + 1) +
          ", 'future', now())");
  db.exec("COMMENT ON FUNCTION relstore_later_than(BIGINT, BIGINT) IS 'from the future'");
  EXPECT_THROW(open_storage(db.uri()), NewerSchemaError);
  EXPECT_THROW(migrate_up(db.uri(), false), NewerSchemaError);
  const auto st = migration_status(db.uri());
  EXPECT_EQ(st.applied.back(), newest + 1);
  EXPECT_EQ(db.scalar("SELECT obj_description('relstore_later_than(BIGINT, BIGINT)'::regprocedure, "
                      "'pg_proc')"),
            "from the future");
}

// Processes running `migrate up` at once each saw a migration pending; the ones that got
// the lock after the first failed on its objects ("already exists"). Under the lock a
// migration already recorded is skipped.
TEST(PostgresqlSchema, AMigrationAppliedMeanwhileIsSkipped) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_apply_twice");
  open_storage(db.uri())->close();
  const StorageUri uri = StorageUri::parse(db.uri());
  auto adapter = backend::open_adapter(uri, uri.options());
  for (const Migration& m : migrations_for("postgresql"))
    EXPECT_NO_THROW(adapter->apply_migration(m));
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM relstore_schema"),
            std::to_string(migrations_for("postgresql").size()));
}

// RelStorage's zap or drop_all removes its tables and leaves relstore's: opening then says
// which tables are left and what to do, changing nothing (it failed on them before).
TEST(PostgresqlSchema, RelstoresTablesWithoutRelStoragesAreNamed) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_leftovers");
  open_storage(db.uri())->close();
  db.exec(
      "DROP TABLE object_state, current_object, \"transaction\", blob_chunk, commit_row_lock, "
      "object_ref, object_refs_added, pack_object, pack_state, pack_state_tid CASCADE; "
      "DROP SEQUENCE zoid_seq");
  try {
    open_storage(db.uri());
    ADD_FAILURE() << "opened";
  } catch (const SchemaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("has relstore's own tables"), std::string::npos) << what;
    EXPECT_NE(what.find("object_json"), std::string::npos) << what;
  }
  EXPECT_EQ(db.scalar("SELECT to_regclass('object_state') IS NULL"), "t");
}

// A database relstore opened before 2026-11-30 has the vote and finish functions with the
// signatures of then (records in temp_store only). The upgrade adds the current ones as
// overloads and leaves the old ones for processes of that version, which call them still;
// the old finish becomes a call of the current one, so that it takes the same commit lock.
TEST(PostgresqlSchema, FunctionsWithAnOlderSignatureStayBesideTheCurrentOnes) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_overloads");
  open_storage(db.uri())->close();
  db.exec(
      "DROP FUNCTION relstore_finish_mirror(BIGINT, BOOLEAN, BYTEA, BYTEA, BYTEA, BIGINT[], "
      "TEXT[], BYTEA[], BIGINT[], BYTEA[], BYTEA[], BYTEA[], TEXT[], BIGINT[], TEXT[], "
      "BIGINT[]); "
      "DROP FUNCTION relstore_finish(BIGINT, BOOLEAN, BYTEA, BYTEA, BYTEA, BIGINT[], TEXT[], "
      "BYTEA[]); "
      "DROP FUNCTION relstore_finish(BIGINT, BOOLEAN, BYTEA, BYTEA, BYTEA); "
      // With the parameter names of the version of then.
      "CREATE FUNCTION relstore_finish(p_forced_tid BIGINT, p_packed BOOLEAN, "
      "p_username BYTEA, p_description BYTEA, p_extension BYTEA) RETURNS BIGINT "
      "LANGUAGE sql AS 'SELECT 7::BIGINT'; "
      "COMMENT ON FUNCTION relstore_finish(BIGINT, BOOLEAN, BYTEA, BYTEA, BYTEA) IS "
      "'relstore md5 of an older text'");
  auto st = open_storage(db.uri());
  auto inst = st->new_instance();
  TransactionMetaData txn{"user", "after the upgrade", ""};
  inst->tpc_begin(txn);
  inst->store(inst->new_oid(), std::nullopt, "data", txn);
  inst->tpc_vote(txn);
  const Tid tid = inst->tpc_finish(txn);
  EXPECT_NE(tid, Tid(7));
  EXPECT_EQ(db.scalar("SELECT COUNT(*) FROM pg_proc WHERE proname = 'relstore_finish'"), "2");
  // Called as an old process calls it, it waits for RelStorage's commit lock.
  auto holder = db.connect();
  holder->simple("BEGIN; SELECT tid FROM commit_row_lock FOR UPDATE", postgresql::Context::other);
  auto old_process = db.connect();
  try {
    old_process->simple(
        "SET lock_timeout = '200ms'; SELECT relstore_finish(NULL, false, '', '', '')",
        postgresql::Context::other);
    ADD_FAILURE() << "the old signature did not wait for the commit lock";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("lock"), std::string::npos) << e.what();
  }
  holder->simple("ROLLBACK", postgresql::Context::other);
}

// A history-preserving deletion's row has md5 '' (RelStorage's deleteObject writes that):
// RelStorage's undo refuses a transaction whose objects' md5 changed since, and a NULL
// md5 compares equal to nothing, so an earlier change of a deleted object was undoable.
TEST(PostgresqlSchema, ADeletionRowHasAnEmptyMd5AsRelStorageWritesIt) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_deletion_md5");
  auto st = open_storage(db.uri("history=preserving"));
  const Tid deleted = testing::create_then_delete(*st->new_instance(), Oid(5));
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM object_state WHERE zoid = 5 AND tid = " +
                          std::to_string(deleted.sql()) + " AND state IS NULL AND md5 = ''"),
            "1");
}

// An upgrade whose DDL waits for a transaction writing to object_state must not queue every
// later writer behind it for the whole lock timeout: it gives way and tries again, and
// completes once the writer is done.
TEST(PostgresqlSchema, AnUpgradeWaitingForAWriterDoesNotStallOtherWriters) {
  RELSTORE_NEED_POSTGRESQL();
  using namespace std::chrono_literals;
  TestDatabase db("schema_upg_wait");
  const std::string uri = db.uri("history=free");
  {
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    for (uint64_t oid = 1; oid <= 2; ++oid) inst->store(Oid(oid), std::nullopt, "x", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  // Back to before migrations 0006 (whose CREATE TRIGGER needs object_state to itself)
  // and 0007.
  db.exec(
      "DROP TRIGGER relstore_object_state_truncated ON object_state; "
      "DROP FUNCTION relstore_object_state_truncated(); "
      "DROP TRIGGER relstore_conversion_truncated ON object_state; "
      "DROP FUNCTION relstore_conversion_truncated(); DROP TABLE relstore_conversion; "
      "DELETE FROM relstore_schema WHERE version >= 6");
  auto writer = db.connect();
  writer->simple("BEGIN; UPDATE object_state SET tid = tid WHERE zoid = 1",
                 postgresql::Context::other);
  auto upgrade = std::async(std::launch::async,
                            [&] { open_storage(uri + "&commit_lock_timeout=20")->close(); });
  const std::string waiting =
      "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND "
      "wait_event_type = 'Lock' AND query LIKE 'CREATE TRIGGER%'";
  bool seen = false;
  for (int i = 0; i < 400 && !seen; ++i) {
    seen = db.scalar(waiting) != "0";
    if (!seen) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(seen) << "the upgrade never waited for the writer";
  auto other = db.connect();
  const auto start = std::chrono::steady_clock::now();
  other->simple("BEGIN; UPDATE object_state SET tid = tid WHERE zoid = 2; COMMIT",
                postgresql::Context::other);
  const auto waited = std::chrono::steady_clock::now() - start;
  std::this_thread::sleep_for(3s);  // the first writer's transaction goes on
  writer->simple("COMMIT", postgresql::Context::other);
  EXPECT_LT(waited, 2s) << "another writer waited behind the upgrade until the first one ended";
  upgrade.get();
  EXPECT_EQ(db.scalar("SELECT MAX(version) FROM relstore_schema"), "7");
}

// Without a pause in the writers, the upgrade gives up at the lock timeout, saying why,
// and changes nothing.
TEST(PostgresqlSchema, AnUpgradeThatNeverGetsItsLockFailsAndChangesNothing) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("schema_upg_busy");
  const std::string uri = db.uri("history=free");
  open_storage(uri)->close();
  db.exec(
      "DROP TRIGGER relstore_object_state_truncated ON object_state; "
      "DROP FUNCTION relstore_object_state_truncated(); "
      "DROP TRIGGER relstore_conversion_truncated ON object_state; "
      "DROP FUNCTION relstore_conversion_truncated(); DROP TABLE relstore_conversion; "
      "DELETE FROM relstore_schema WHERE version >= 6");
  auto writer = db.connect();
  writer->simple("BEGIN; LOCK TABLE object_state IN ROW EXCLUSIVE MODE",
                 postgresql::Context::other);
  // A lock timeout shorter than one attempt's wait (200 ms) is the whole wait.
  for (const std::string timeout : {"1", "0.05"}) {
    SCOPED_TRACE(timeout);
    try {
      open_storage(uri + "&commit_lock_timeout=" + timeout);
      FAIL() << "the upgrade went through a held lock";
    } catch (const SchemaError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("relstore migrate up"), std::string::npos) << what;
      EXPECT_NE(what.find("nothing was changed"), std::string::npos) << what;
      EXPECT_NE(what.find(timeout == "1" ? " for 1000 ms " : " for 50 ms "), std::string::npos)
          << what;
    }
  }
  writer->simple("COMMIT", postgresql::Context::other);
  EXPECT_EQ(db.scalar("SELECT MAX(version) FROM relstore_schema"), "5");
}

}  // namespace
}  // namespace relstore
