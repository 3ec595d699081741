// Connections: errors when connecting, libpq parameters, snapshots that end promptly,
// and reconnecting after a lost connection (issue #3, parts 1 and 6).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>
#include <tuple>

#include "postgresql/pg_support.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;

// A local TCP port nobody listens on.
int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// `uri` with its password replaced by `password`.
std::string with_password(const std::string& uri, const std::string& password) {
  const size_t colon = uri.find(':', uri.find("://") + 3);
  const size_t at = uri.find('@');
  return uri.substr(0, colon + 1) + password + uri.substr(at);
}

TEST(PostgresqlConnect, WrongPasswordIsAClearNonRetryableErrorWithoutThePassword) {
  RELSTORE_NEED_POSTGRESQL();
  const std::string uri = with_password(*pgtest::server_uri(), "Wr0ngPassw0rd");
  try {
    open_storage(uri);
    FAIL() << "the server accepted a wrong password: the test server must check passwords "
              "(scripts/db-servers.sh starts it with --auth-host=scram-sha-256)";
  } catch (const DisconnectedError& e) {
    FAIL() << "a wrong password is not a lost connection: " << e.what();
  } catch (const StorageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("authentication failed"), std::string::npos) << what;
    EXPECT_EQ(what.find("Wr0ngPassw0rd"), std::string::npos) << what;
    EXPECT_FALSE(e.retryable());
  }
}

TEST(PostgresqlConnect, UnreachableServerIsAClearError) {
  RELSTORE_NEED_POSTGRESQL();
  const std::string uri =
      "postgresql://relstore:Secr3t@127.0.0.1:" + std::to_string(closed_port()) +
      "/nothing?connect_timeout=3";
  try {
    open_storage(uri);
    FAIL() << "connected to a closed port";
  } catch (const DisconnectedError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot connect"), std::string::npos) << what;
    EXPECT_NE(what.find("127.0.0.1"), std::string::npos) << what;
    EXPECT_EQ(what.find("Secr3t"), std::string::npos) << what;
  }
}

TEST(PostgresqlConnect, MissingDatabaseIsASchemaError) {
  RELSTORE_NEED_POSTGRESQL();
  const std::string uri = pgtest::uri_with(*pgtest::server_uri(), "relstore_no_such_database");
  try {
    open_storage(uri);
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(PostgresqlConnect, UnknownOptionIsAConfigError) {
  RELSTORE_NEED_POSTGRESQL();
  EXPECT_THROW(open_storage(*pgtest::server_uri() + "?colour=blue"), ConfigError);
}

// Every application_name names the connection's role, after the application's own.
// A part of the address given again as an option: libpq took the option without a word.
TEST(PostgresqlConnect, AnAddressPartGivenAgainAsAnOptionIsAConfigError) {
  for (const char* option : {"port=6000", "user=other", "dbname=other", "password=secret2"}) {
    try {
      open_storage(std::string("postgresql://u:secret@127.0.0.1:5999/db?") + option);
      ADD_FAILURE() << option;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("given in the address and again"), std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
  }
}

TEST(PostgresqlConnect, LibpqParametersPassThroughAndRolesAreNamed) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_names");
  auto st = open_storage(db.uri("application_name=myapp&connect_timeout=5&sslmode=disable"));
  auto inst = st->new_instance();
  inst->poll_invalidations();
  inst->new_oid();  // opens a store connection
  const std::string names = db.scalar(
      "SELECT string_agg(DISTINCT application_name, ',' ORDER BY application_name) "
      "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  EXPECT_EQ(names, "myapp (relstore load),myapp (relstore store)");
}

std::string load_connection_states(TestDatabase& db) {
  return db.scalar(
      "SELECT string_agg(state, ',') FROM pg_stat_activity "
      "WHERE datname = current_database() AND application_name = 'relstore load'");
}

// An idle-in-transaction connection holds back vacuum: the snapshot must end with the
// application transaction.
TEST(PostgresqlConnect, NoLoadConnectionIsIdleInTransactionAfterReleaseSnapshot) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_idle");
  auto st = open_storage(db.uri());
  auto writer = st->new_instance();
  TransactionMetaData txn{"", "", ""};
  writer->tpc_begin(txn);
  writer->store(Oid(1), std::nullopt, "x", txn);
  writer->tpc_vote(txn);
  writer->tpc_finish(txn);
  auto a = st->new_instance();
  auto b = st->new_instance();
  a->poll_invalidations();
  b->load(Oid(1));
  writer->load(Oid(1));
  // While the application transactions run, their snapshots are open.
  EXPECT_EQ(load_connection_states(db),
            "idle in transaction,idle in transaction,idle in transaction");
  a->release_snapshot();
  b->release_snapshot();
  writer->release_snapshot();
  // The ROLLBACK is sent without waiting for its reply: give the server a moment (a
  // connection shows "active" while it runs the ROLLBACK).
  std::string states;
  for (int i = 0; i < 200; ++i) {
    states = load_connection_states(db);
    if (states == "idle,idle,idle") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(states, "idle,idle,idle");
}

void terminate_connections(TestDatabase& db, const std::string& role) {
  const std::string pids = db.scalar(
      "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE datname = "
      "current_database() AND application_name = 'relstore " +
      role + "'");
  db.exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE datname = current_database() AND application_name = 'relstore " +
      role + "'");
  // Wait until the server has ended them, and (the server being local, as in CI) until
  // their processes are gone: only then has the socket surely been closed, which a
  // client can notice (the activity view drops a backend a moment before it exits).
  for (int i = 0; i < 200; ++i) {
    if (db.scalar("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                  "AND application_name = 'relstore " +
                  role + "'") == "0") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::istringstream each(pids);
  for (std::string pid; each >> pid;) {
    for (int i = 0; i < 500 && std::filesystem::exists("/proc/" + pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

Tid commit_one(StorageInstance& inst, uint64_t oid, const std::string& data,
               std::optional<Tid> serial) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  try {
    inst.store(Oid(oid), serial, data, txn);
    inst.tpc_vote(txn);
    return inst.tpc_finish(txn);
  } catch (...) {
    inst.tpc_abort(txn);
    throw;
  }
}

// A load connection the server dropped between transactions is replaced by the next poll.
TEST(PostgresqlReconnect, LoadConnectionLostBetweenTransactions) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_lost_load");
  auto st = open_storage(db.uri());
  auto inst = st->new_instance();
  const Tid t1 = commit_one(*inst, 1, "v1", std::nullopt);
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "v1");
  inst->release_snapshot();
  terminate_connections(db, "load");
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).tid, t1);
}

// What the replaced connection's polls compare with is the instance's, not the new
// connection's: a history replaced from the same start (history-preserving) while the
// reader was disconnected shows only in the reader's last transaction being gone, and the
// first poll on the new connection must still see that.
TEST(PostgresqlReconnect, AHistoryReplacedWhileTheLoadConnectionWasLostIsNoticed) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_lost_tip");
  auto st = open_storage(db.uri("history=preserving"));
  auto inst = st->new_instance();
  const Tid t1 = commit_one(*inst, 1, "a", std::nullopt);
  const Tid t2 = commit_one(*inst, 1, "b", t1);
  auto reader = open_storage(db.uri("history=preserving"))->new_instance();
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data, "b");
  reader->release_snapshot();
  terminate_connections(db, "load");
  st->zap_all();
  for (const auto& [tid, oid, data] :
       {std::tuple{t1, 1, "a"}, std::tuple{Tid(t2.value() + 1000), 2, "later"}}) {
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn, tid);
    inst->restore(Oid(oid), tid, std::string(data), txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  EXPECT_FALSE(reader->poll_invalidations().has_value());
  EXPECT_EQ(reader->load(Oid(1)).data, "a");
}

// Lost in the middle of a snapshot: that read fails with DisconnectedError (retryable),
// and the next transaction reconnects.
TEST(PostgresqlReconnect, LoadConnectionLostDuringASnapshot) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_lost_snapshot");
  auto st = open_storage(db.uri("cache_mb=0"));
  auto inst = st->new_instance();
  commit_one(*inst, 1, "v1", std::nullopt);
  inst->poll_invalidations();
  terminate_connections(db, "load");
  try {
    inst->load(Oid(1));
    FAIL() << "read from a terminated connection";
  } catch (const DisconnectedError& e) {
    EXPECT_TRUE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("next transaction reconnects"), std::string::npos)
        << e.what();
  }
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "v1");
}

// A poll that fails on a connection that stays up (here statement_timeout cancels it while
// another session holds the table) leaves its transaction aborted; the next poll rolls it
// back and works, instead of failing with "current transaction is aborted" for good.
TEST(PostgresqlReconnect, APollThatFailsOnALiveConnectionDoesNotBreakTheNextOne) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("poll_fails");
  auto st = open_storage(db.uri("history=free&cache_mb=0&options=-c%20statement_timeout%3D300"));
  auto inst = st->new_instance();
  const Tid t1 = commit_one(*inst, 1, "v1", std::nullopt);
  inst->poll_invalidations();
  inst->release_snapshot();
  auto holder = db.connect();
  holder->simple("BEGIN; LOCK TABLE object_state IN ACCESS EXCLUSIVE MODE",
                 postgresql::Context::other);
  EXPECT_THROW(inst->poll_invalidations(), StorageError);
  holder->simple("ROLLBACK", postgresql::Context::other);
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).tid, t1);
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "v1");
}

// Pooled store connections the server dropped are replaced: the next commit either sees
// the loss before it starts or fails with a retryable DisconnectedError, and the retry
// goes through.
TEST(PostgresqlReconnect, StoreConnectionLostWhilePooled) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_lost_store");
  auto st = open_storage(db.uri());
  auto inst = st->new_instance();
  Tid t = commit_one(*inst, 1, "v1", std::nullopt);
  terminate_connections(db, "store");
  try {
    t = commit_one(*inst, 1, "v2", t);
  } catch (const DisconnectedError& e) {
    EXPECT_TRUE(e.retryable());
    t = commit_one(*inst, 1, "v2", t);
  }
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).data, "v2");
  EXPECT_EQ(inst->load(Oid(1)).tid, t);
}

// Lost between vote and finish, before the finish is sent: the session's end is visible on
// the socket, so the finish knows nothing was committed and says so with a retryable
// error (CommitOutcomeUnknownError, not retryable, is for a connection lost while the
// commit was on its way, when it may or may not have been applied).
TEST(PostgresqlReconnect, StoreConnectionLostAfterVote) {
  RELSTORE_NEED_POSTGRESQL();
  TestDatabase db("conn_lost_vote");
  auto st = open_storage(db.uri());
  auto inst = st->new_instance();
  const Tid t1 = commit_one(*inst, 1, "v1", std::nullopt);
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(Oid(1), t1, "v2", txn);
  inst->tpc_vote(txn);
  terminate_connections(db, "store");
  try {
    inst->tpc_finish(txn);
    FAIL() << "finished on a terminated connection";
  } catch (const DisconnectedError& e) {
    EXPECT_EQ(dynamic_cast<const CommitOutcomeUnknownError*>(&e), nullptr) << e.what();
    EXPECT_TRUE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("nothing was committed"), std::string::npos) << e.what();
  }
  inst->tpc_abort(txn);
  inst->poll_invalidations();
  EXPECT_EQ(inst->load(Oid(1)).tid, t1);
  const Tid t2 = commit_one(*inst, 1, "v2", t1);
  EXPECT_GT(t2, t1);
}

}  // namespace
}  // namespace relstore
