// Session settings, snapshot lifetime and lost connections.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "adapters/mysql/schema_installer.h"
#include "adapters/mysql/upload.h"
#include "mysql/support.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore::mysql::testing {
namespace {

class MysqlConnection : public MysqlServerTest {
 protected:
  std::map<std::string, std::string> session(Role role, double lock_timeout = 30) {
    Settings s;
    s.connect = connect_params(base_, base_.options());
    s.lock_timeout = lock_timeout;
    s.server = server_info(*connect());  // as the adapter learns it before any session
    auto conn = open_connection(s, role, nullptr);
    std::map<std::string, std::string> out;
    // MariaDB 10 names them tx_*, MySQL 8 transaction_*.
    const std::string tx =
        conn->query_int("SELECT VERSION() LIKE '%MariaDB%'") ? "@@tx_" : "@@transaction_";
    conn->batch(
        "SELECT @@sql_mode, @@time_zone, @@character_set_results, " + tx + "isolation, " + tx +
            "read_only, @@autocommit, @@innodb_lock_wait_timeout, @@character_set_client, " +
            (s.server.mariadb ? "@@max_statement_time" : "@@max_execution_time"),
        1,
        [&](Rows& r) {
          if (!r.next()) return;
          const char* names[] = {"sql_mode",     "time_zone", "results",
                                 "isolation",    "read_only", "autocommit",
                                 "lock_timeout", "client",    "statement_time"};
          for (int i = 0; i < 9; ++i) out[names[i]] = r.is_null(i) ? "NULL" : r.bytes(i);
        },
        Context::other);
    return out;
  }

  // Connections of other sessions to `db`, by id.
  std::vector<int64_t> sessions_on(const std::string& db) {
    std::vector<int64_t> ids;
    connect()->batch(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '" + db +
            "' AND ID <> CONNECTION_ID()",
        1,
        [&](Rows& r) {
          while (r.next()) ids.push_back(r.int64(0));
        },
        Context::other);
    return ids;
  }

  void kill_sessions_on(const std::string& db) {
    auto conn = connect();
    for (int64_t id : sessions_on(db)) {
      try {
        conn->exec("KILL CONNECTION " + std::to_string(id));
      } catch (const StorageError&) {
        // It ended by itself meanwhile.
      }
    }
  }

  int64_t open_transactions_on(const std::string& db) {
    // InnoDB refreshes INNODB_TRX at most every 100 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    return connect()->query_int(
        "SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN "
        "information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.DB = '" +
        db + "'");
  }
};

TEST_F(MysqlConnection, SessionsRunWithTheDocumentedSettings) {
  auto load = session(Role::load);
  EXPECT_NE(load["sql_mode"].find("ANSI_QUOTES"), std::string::npos);
  EXPECT_EQ(load["sql_mode"].find("NO_BACKSLASH_ESCAPES"), std::string::npos);
  EXPECT_EQ(load["time_zone"], "+00:00");
  EXPECT_EQ(load["results"], "binary");
  EXPECT_EQ(load["client"], "utf8mb4");
  EXPECT_EQ(load["isolation"], "REPEATABLE-READ");
  EXPECT_EQ(load["read_only"], "1");

  auto store = session(Role::store, 7.5);
  EXPECT_NE(store["sql_mode"].find("ANSI_QUOTES"), std::string::npos);
  EXPECT_EQ(store["time_zone"], "+00:00");
  EXPECT_EQ(store["results"], "binary");
  EXPECT_EQ(store["isolation"], "READ-COMMITTED");
  EXPECT_EQ(store["read_only"], "0");
  EXPECT_EQ(store["autocommit"], "0");
  EXPECT_EQ(store["lock_timeout"], "8");  // whole seconds, rounded up
  // No server-wide statement time limit cuts a commit's lock waits short.
  EXPECT_EQ(std::stod(store["statement_time"]), 0.0);
}

// The store connection's temporary tables are on an engine that empties a table on DELETE
// (InnoDB kept the deleted rows, and every commit scanned them); such engines ignore
// ROLLBACK, so a rollback deletes the rows itself (sql/mysql/temp_tables.sql).
// Connection options are checked, not read as far as atoi could: "ten" is no timeout of
// 0 seconds, and ZConfig's "False" (any case) turns compression off.
TEST_F(MysqlConnection, ConnectionOptionsAreCheckedWords) {
  const std::string uri = fresh_database("options");
  for (const char* bad : {"?connect_timeout=ten", "?read_timeout=5s", "?compress=maybe"}) {
    EXPECT_THROW(open_storage(uri + bad), ConfigError) << bad;
  }
  EXPECT_NO_THROW(open_storage(uri + "?compress=False&connect_timeout=3")->close());
}

TEST_F(MysqlConnection, StoreTemporaryTablesAreNotInnoDBAndARollbackEmptiesThem) {
  Settings s;
  s.connect = connect_params(base_, base_.options());
  s.server = server_info(*connect());
  auto conn = open_connection(s, Role::store, nullptr);
  for (const char* table : {"temp_store", "temp_read_current", "temp_json"}) {
    std::string create;
    conn->batch(
        std::string("SHOW CREATE TABLE ") + table, 1,
        [&](Rows& r) {
          if (r.next()) create = r.bytes(1);
        },
        Context::other);
    EXPECT_NE(create.find("ENGINE=" + s.server.temp_engine()), std::string::npos) << create;
  }
  const bool myisam_disabled = s.server.disabled_engines.find("MyISAM") != std::string::npos ||
                               s.server.disabled_engines.find("myisam") != std::string::npos;
  EXPECT_EQ(s.server.temp_engine(),
            s.server.mariadb ? "Aria" : (myisam_disabled ? "InnoDB" : "MyISAM"));
  conn->batch(
      "INSERT INTO temp_store (zoid, prev_tid, md5, state) VALUES (1, 0, NULL, 'x'); "
      "INSERT INTO temp_read_current (zoid, tid) VALUES (1, 1); "
      "INSERT INTO temp_json (zoid, tid) VALUES (1, 1)",
      3, Context::other);
  conn->rollback();
  ASSERT_TRUE(conn->healthy());
  EXPECT_EQ(conn->query_int("SELECT (SELECT COUNT(*) FROM temp_store) + "
                            "(SELECT COUNT(*) FROM temp_read_current) + "
                            "(SELECT COUNT(*) FROM temp_json)"),
            0);
}

// A MySQL that refuses MyISAM (InnoDB Cluster setups) gets InnoDB temporary tables.
TEST(MysqlTempEngine, FollowsTheServerFlavourAndDisabledEngines) {
  ServerInfo server;
  server.mariadb = true;
  EXPECT_EQ(server.temp_engine(), "Aria");
  server.mariadb = false;
  EXPECT_EQ(server.temp_engine(), "MyISAM");
  server.disabled_engines = "MyISAM,BLACKHOLE,FEDERATED,ARCHIVE,MEMORY";
  EXPECT_EQ(server.temp_engine(), "InnoDB");
  server.disabled_engines = "memory, myisam";
  EXPECT_EQ(server.temp_engine(), "InnoDB");
  server.disabled_engines = "MEMORY,MRG_MYISAM";
  EXPECT_EQ(server.temp_engine(), "MyISAM");
}

TEST_F(MysqlConnection, TheSnapshotEndsWhenTheApplicationTransactionEnds) {
  const std::string uri = fresh_database("snapshot");
  const std::string db = StorageUri::parse(uri).database;
  auto st = open_storage(uri);
  commit_one(*st->new_instance(), Oid(1), std::nullopt, "x");
  auto reader = st->new_instance();
  reader->poll_invalidations();
  reader->load(Oid(1));
  EXPECT_EQ(open_transactions_on(db), 1) << "the snapshot is a server transaction";
  reader->release_snapshot();
  EXPECT_EQ(open_transactions_on(db), 0) << "no connection left idle in a transaction";
}

TEST_F(MysqlConnection, ALostLoadConnectionIsDisconnectedErrorAndTheNextPollReconnects) {
  const std::string uri = fresh_database("lost_load");
  const std::string db = StorageUri::parse(uri).database;
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), std::nullopt, "one", txn);
  inst->store(Oid(2), std::nullopt, "two", txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  auto reader = open_storage(uri + "?cache_mb=0")->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "one");
  kill_sessions_on(db);
  try {
    reader->load(Oid(2));
    FAIL() << "loaded through a killed connection";
  } catch (const DisconnectedError& e) {
    EXPECT_TRUE(e.retryable());
  }
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(2)).data, "two");
}

// The rows an upload sends before the packet that carries its committing tail (the
// finish's CALL, with in-commit mirror rows beyond one packet) commit nothing: a connection
// lost while they travel is a plain disconnect. It was reported as CommitOutcomeUnknown.
TEST_F(MysqlConnection, ALossBeforeTheCommittingPacketIsAPlainDisconnect) {
  auto conn = connect();
  const int64_t id = conn->query_int("SELECT CONNECTION_ID()");
  connect()->exec("KILL CONNECTION " + std::to_string(id));
  Settings settings;
  settings.server.max_allowed_packet = 1 << 20;  // three rows of 400 kB: two packets
  UploadRows rows;
  rows.count = 3;
  rows.size = [](size_t) { return size_t{400 * 1024 + 16}; };
  rows.append = [](std::string& sql, size_t i) {
    sql += "(" + std::to_string(i) + ", '" + std::string(400 * 1024, 'x') + "')";
  };
  rows.name = [](size_t i) { return "row " + std::to_string(i); };
  try {
    upload(*conn, settings, "INSERT INTO t (id, v) VALUES ", rows, "SELECT 1", 1, nullptr,
           Context::commit);
    ADD_FAILURE() << "a killed connection took the upload";
  } catch (const CommitOutcomeUnknownError& e) {
    ADD_FAILURE() << "nothing could have committed: " << e.what();
  } catch (const DisconnectedError& e) {
    EXPECT_NE(std::string(e.what()).find("lost the connection"), std::string::npos) << e.what();
  }
}

// A pooled store connection the server closed (a restart, wait_timeout, KILL) is replaced
// when its first statement finds it lost, as on PostgreSQL: neither the next commit nor
// new_oid fails for it (each pooled connection cost one failed transaction before).
TEST_F(MysqlConnection, ALostPooledStoreConnectionIsReplacedWithoutFailing) {
  const std::string uri = fresh_database("lost_store");
  const std::string db = StorageUri::parse(uri).database;
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  auto commit = [&](const std::string& data) {
    inst->poll_invalidations();
    std::optional<Tid> serial;
    try {
      serial = inst->load(Oid(1)).tid;
    } catch (const POSKeyError&) {
    }
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    try {
      inst->store(Oid(1), serial, data, txn);
      inst->tpc_vote(txn);
      inst->tpc_finish(txn);
    } catch (...) {
      inst->tpc_abort(txn);
      throw;
    }
  };
  commit("first");  // leaves a store connection in the pool
  kill_sessions_on(db);
  commit("second");
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "second");
  kill_sessions_on(db);
  EXPECT_GT(inst->new_oid(), Oid(1));
}

// With a client read_timeout, a vote that times out while the server's session still
// waits for a row lock is not run again on a new connection: that would leave the first
// session waiting beside the second.
TEST_F(MysqlConnection, AVoteCutByTheClientsReadTimeoutIsNotRunAgain) {
  const std::string uri = fresh_database("read_timeout", "?history=free");
  const std::string db = StorageUri::parse(uri).database;
  {
    auto st = open_storage(uri);
    commit_one(*st->new_instance(), Oid(1), std::nullopt, "v1");
  }
  auto holder = connect(db);
  holder->exec("START TRANSACTION");
  holder->exec("SELECT zoid FROM object_state WHERE zoid = 1 FOR UPDATE");
  auto st = open_storage(uri + "&read_timeout=1&commit_lock_timeout=5");
  auto inst = st->new_instance();
  const Tid serial = inst->load(Oid(1)).tid;
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), serial, "v2", txn);
  EXPECT_THROW(inst->tpc_vote(txn), DisconnectedError);
  inst->tpc_abort(txn);
  int waiting = 0;
  connect()->batch(
      "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '" + db +
          "' AND COMMAND = 'Query' AND ID <> CONNECTION_ID()",
      1, [&](Rows& r) { waiting = r.next() ? static_cast<int>(r.int64(0)) : -1; }, Context::other);
  EXPECT_EQ(waiting, 1);  // the timed-out vote's session only, not a second one
  holder->exec("ROLLBACK");
}

// The allocator's cleanup of old new_oid rows waits at most a second for a row another
// session holds (RelStorage allocates in its open store transaction and keeps its rows
// locked until its commit): new_oid, which every thread of a storage waits for, stalled
// for the whole commit lock timeout.
TEST_F(MysqlConnection, TheOidCleanupDoesNotWaitForAnotherSessionsRows) {
  const std::string uri = fresh_database("oid_cleanup", "?history=free");
  auto st = open_storage(uri + "&commit_lock_timeout=20");
  auto setup = connect(StorageUri::parse(uri).database);
  setup->exec("INSERT INTO new_oid (zoid) VALUES (998), (1998)");
  setup->exec("COMMIT");
  auto holder = connect(StorageUri::parse(uri).database);
  holder->exec("START TRANSACTION");
  holder->exec("SELECT zoid FROM new_oid WHERE zoid = 998 FOR UPDATE");
  auto inst = st->new_instance();
  const auto started = std::chrono::steady_clock::now();
  // Blocks 1999, then 2000 and 2001: the second allocation crosses block 2000 and cleans
  // up the rows below block 1000, among them the one the holder keeps locked.
  Oid last;
  for (int i = 0; i < 40; ++i) last = inst->new_oid();
  EXPECT_GE(last.value(), 2000u * 16 - 15);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
  holder->exec("COMMIT");
  // The session's own lock wait is back: a vote waits for an object lock longer than the
  // cleanup's second.
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(last, std::nullopt, "v1", txn);
  inst->tpc_vote(txn);
  const Tid t1 = inst->tpc_finish(txn);
  holder->exec("START TRANSACTION");
  holder->exec("SELECT zoid FROM object_state WHERE zoid = " + std::to_string(last.sql()) +
               " FOR UPDATE");
  auto release = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    holder->exec("COMMIT");
  });
  TransactionMetaData again{"", "", ""};
  inst->tpc_begin(again);
  inst->store(last, t1, "v2", again);
  EXPECT_NO_THROW(inst->tpc_vote(again));
  inst->tpc_abort(again);
  release.get();
}

TEST_F(MysqlConnection, UploadsLargerThanOnePacketAreSplitAndATooLargeRecordIsAClearError) {
  const std::string uri = fresh_database("packets", "?history=free");
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  const int64_t packet = connect()->query_int("SELECT @@max_allowed_packet");
  // Enough 1 MiB records for two or more INSERT batches.
  const int records = static_cast<int>(packet / (1 << 20)) + 4;
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  for (int i = 1; i <= records; ++i) {
    std::string state(1 << 20, static_cast<char>('a' + i % 26));
    state[0] = '\'';  // something to escape
    state[1] = '\0';
    inst->store(Oid(static_cast<uint64_t>(i)), std::nullopt, state, txn);
  }
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  auto reader = open_storage(uri + "&cache_mb=0")->new_instance();
  for (int i = 1; i <= records; ++i) {
    const auto data = reader->load(Oid(static_cast<uint64_t>(i))).data;
    ASSERT_EQ(data.size(), 1u << 20);
    EXPECT_EQ(data[0], '\'');
    EXPECT_EQ(data[1], '\0');
    EXPECT_EQ(data[2], static_cast<char>('a' + i % 26));
  }

  TransactionMetaData big{"", "", ""};
  inst->tpc_begin(big);
  inst->store(Oid(1000), std::nullopt, std::string(static_cast<size_t>(packet) + 1, 'x'), big);
  try {
    inst->tpc_vote(big);
    FAIL() << "stored a record larger than max_allowed_packet";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("max_allowed_packet"), std::string::npos) << e.what();
  }
  inst->tpc_abort(big);
}

// The statements after the rows (here a readCurrent list of ~100 KB) ride in the last
// packet only when they fit: with the rows filling that packet up to the slack kept for
// them, they go in a packet of their own instead of making the server drop the connection.
TEST_F(MysqlConnection, ALongReadCurrentListAfterAFullPacketGoesInAPacketOfItsOwn) {
  const std::string uri = fresh_database("packet_tail", "?history=free");
  auto st = open_storage(uri);
  auto inst = st->new_instance();
  const int64_t packet = connect()->query_int("SELECT @@max_allowed_packet");
  constexpr uint64_t kRead = 4000;
  TransactionMetaData create{"", "", ""};
  inst->tpc_begin(create);
  for (uint64_t oid = 1; oid <= kRead; ++oid) inst->store(Oid(oid), std::nullopt, "r", create);
  inst->tpc_vote(create);
  const Tid t1 = inst->tpc_finish(create);

  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  for (uint64_t oid = 1; oid <= kRead; ++oid) inst->check_current_serial(Oid(oid), t1, txn);
  // One row just under the rows' share of a packet (max_allowed_packet less 64 KiB).
  const size_t state_size = static_cast<size_t>(packet) - 64 * 1024 - 1000;
  inst->store(Oid(kRead + 1), std::nullopt, std::string(state_size, 'x'), txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  auto reader = open_storage(uri + "&cache_mb=0")->new_instance();
  EXPECT_EQ(reader->load(Oid(kRead + 1)).data.size(), state_size);
}

}  // namespace
}  // namespace relstore::mysql::testing
