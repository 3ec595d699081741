// relstore on MySQL/MariaDB against raw mysql-connector-c++ calls, in one process and one
// run, on the same server and tables (docs/benchmarks.md). Prints a table; not a test.
//
//   mysql_ratios [URI] [--objects N] [--rounds R] [--txns T]
//
// URI defaults to $RELSTORE_TEST_MYSQL_URI; the databases <db>_ratios_hf / _hp are
// created (or emptied) on that server.
//
// 1. load: relstore `load` of distinct objects with the state cache off, vs a raw prepared
//    SELECT state, tid FROM object_state WHERE zoid = ? (history-free; current_object_state
//    history-preserving) in a REPEATABLE READ snapshot.
// 2. 20-object write transaction: relstore tpc_begin…tpc_finish updating 20 objects, vs the
//    minimal raw SQL doing the same writes (escaping included), in one multi-statement
//    round trip and one transaction (START TRANSACTION … COMMIT: the connection is in
//    autocommit, where each statement would commit, and flush, on its own):
//    HF an INSERT … ON DUPLICATE KEY UPDATE of the 20 rows and COMMIT; HP the transaction
//    row, the 20 object_state rows, the current_object upsert and COMMIT.
//    History-free also against the same writes staged through a temporary table (as
//    relstore's MySQL vote does), to separate the staging's cost.
// 3. The same with 1 object.
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "relstore/storage.h"
#include "relstore/uri.h"
#include "stats.h"

namespace {

using namespace bench;
using relstore::Oid;
using relstore::Tid;

std::unique_ptr<sql::Connection> raw_connect(const relstore::StorageUri& u, const std::string& db) {
  sql::ConnectOptionsMap o;
  o["hostName"] = sql::SQLString(u.host.empty() ? "localhost" : u.host);
  o["port"] = u.port.value_or(3306);
  o["userName"] = sql::SQLString(u.user);
  o["password"] = sql::SQLString(u.password);
  if (!db.empty()) o["schema"] = sql::SQLString(db);
  o["CLIENT_MULTI_STATEMENTS"] = true;
  std::unique_ptr<sql::Connection> c(sql::mysql::get_mysql_driver_instance()->connect(o));
  std::unique_ptr<sql::Statement> s(c->createStatement());
  s->execute("SET SESSION sql_mode = 'ANSI_QUOTES', character_set_results = binary");
  return c;
}

// Runs a multi-statement batch and reads every result.
void run(sql::Statement& s, const std::string& sql) {
  bool rows = s.execute(sql);
  for (int empty = 0; empty < 64;) {
    if (rows) {
      std::unique_ptr<sql::ResultSet> rs(s.getResultSet());
      while (rs->next()) {
      }
      empty = 0;
    } else {
      ++empty;
    }
    rows = s.getMoreResults();
  }
}

std::string literal(sql::Connection& c, const std::string& bytes) {
  return "_binary'" +
         static_cast<sql::mysql::MySQL_Connection&>(c).escapeString(bytes).asStdString() + "'";
}

struct Figures {
  double round_trip = 0;  // a raw DO 1: the network and scheduling cost every call pays
  double load_relstore = 0, load_raw = 0;
  double w20_relstore = 0, w20_raw = 0;
  double w20_raw_temp = 0;  // HF only: the raw writes staged through a temporary table
  double w1_relstore = 0, w1_raw = 0;
  double trips_20 = 0, trips_1 = 0;
};

Figures measure(const std::string& base_uri, bool hp, int objects, int rounds, int txns) {
  const auto base = relstore::StorageUri::parse(base_uri);
  const std::string db = base.database + (hp ? "_ratios_hp" : "_ratios_hf");
  {
    auto admin = raw_connect(base, base.database);
    std::unique_ptr<sql::Statement> s(admin->createStatement());
    s->execute("CREATE DATABASE IF NOT EXISTS \"" + db + "\"");
  }
  std::string uri = base_uri.substr(0, base_uri.find('?'));
  uri = uri.substr(0, uri.rfind('/') + 1) + db + (hp ? "?history=preserving" : "?history=free");
  relstore::open_storage(uri)->zap_all();
  auto storage = relstore::open_storage(uri + "&cache_mb=0");
  auto inst = storage->new_instance();
  const std::string payload(300, 'p');
  Figures f;

  // Fill: objects 1..N in transactions of 100.
  std::vector<Tid> serial(static_cast<size_t>(objects) + 1);
  for (int first = 1; first <= objects; first += 100) {
    relstore::TransactionMetaData txn{"bench", "fill", ""};
    inst->tpc_begin(txn);
    for (int i = first; i < first + 100 && i <= objects; ++i) {
      inst->store(Oid(static_cast<uint64_t>(i)), std::nullopt, payload, txn);
    }
    inst->tpc_vote(txn);
    const Tid tid = inst->tpc_finish(txn);
    for (int i = first; i < first + 100 && i <= objects; ++i) serial[static_cast<size_t>(i)] = tid;
  }

  auto raw = raw_connect(base, db);
  std::unique_ptr<sql::Statement> stmt(raw->createStatement());
  // The engine relstore's temporary tables use (sql/mysql/temp_tables.sql): on InnoDB the
  // staged rows would pile up and slow every later statement on the table.
  const bool mariadb = [&] {
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery("SELECT VERSION()"));
    return rs->next() && rs->getString(1).asStdString().find("MariaDB") != std::string::npos;
  }();
  stmt->execute(
      "CREATE TEMPORARY TABLE raw_temp (zoid BIGINT NOT NULL PRIMARY KEY, state LONGBLOB) "
      "ENGINE = " +
      std::string(mariadb ? "Aria" : "MyISAM"));
  std::unique_ptr<sql::PreparedStatement> select(
      raw->prepareStatement(hp ? "SELECT state, tid FROM current_object_state WHERE zoid = ?"
                               : "SELECT state, tid FROM object_state WHERE zoid = ?"));

  // The raw side's objects (10000000 + i) exist before it writes, as relstore's do: its
  // writes are updates from the first, not inserts until every object was written once.
  {
    const std::string lit = literal(*raw, payload);
    if (hp) {
      run(*stmt,
          "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, extension) "
          "VALUES (1, FALSE, FALSE, 'bench', 'fill', '')");
    }
    for (int first = 1; first <= objects; first += 500) {
      std::string states, current;
      for (int i = first; i < first + 500 && i <= objects; ++i) {
        const std::string zoid = std::to_string(10000000 + i);
        states += (states.empty() ? "" : ",") + std::string("(") + zoid + ",1," +
                  (hp ? "0,'0123456789abcdef0123456789abcdef'," : "") +
                  std::to_string(payload.size()) + "," + lit + ")";
        current += (current.empty() ? "" : ",") + std::string("(") + zoid + ",1)";
      }
      run(*stmt, std::string("START TRANSACTION; INSERT INTO object_state (zoid, tid, ") +
                     (hp ? "prev_tid, md5, " : "") + "state_size, state) VALUES " + states + "; " +
                     (hp ? "INSERT INTO current_object (zoid, tid) VALUES " + current + "; " : "") +
                     "COMMIT");
    }
  }

  std::vector<double> trips;
  for (int i = 0; i < 2000; ++i) {
    const auto t0 = Clock::now();
    stmt->execute("DO 1");
    trips.push_back(micros(t0));
  }
  f.round_trip = median(trips);

  // 1. Loads.
  std::vector<double> rl, xl;
  size_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    inst->poll_invalidations();
    auto t0 = Clock::now();
    for (int i = 1; i <= objects; ++i)
      sink += inst->load(Oid(static_cast<uint64_t>(i))).data.size();
    rl.push_back(micros(t0) / objects);
    inst->release_snapshot();

    stmt->execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    t0 = Clock::now();
    for (int i = 1; i <= objects; ++i) {
      select->setInt64(1, i);
      std::unique_ptr<sql::ResultSet> rs(select->executeQuery());
      rs->next();
      // Copy the bytes out, as any caller of a load must.
      const std::string state = rs->getString(1).asStdString();
      sink += state.size() + static_cast<size_t>(rs->getInt64(2) & 1);
    }
    xl.push_back(micros(t0) / objects);
    stmt->execute("ROLLBACK");
  }
  f.load_relstore = median(rl);
  f.load_raw = median(xl);

  // 2 and 3. Writes, relstore and raw alternating in blocks of kBlock transactions (each
  // side runs warm, and both see the same machine over time), on disjoint objects.
  constexpr int kBlock = 50;
  int64_t raw_tid = 0;
  for (int n : {20, 1}) {
    std::vector<double> rw, xw, tw;
    uint64_t trip_count = 0;
    int next_relstore = 1, next_raw = 1;
    auto group_of = [&](int& next) {
      std::vector<int> group;
      for (int k = 0; k < n; ++k) {
        group.push_back(next);
        next = next % objects + 1;
      }
      return group;
    };
    for (int block = 0; block < txns; block += kBlock) {
      for (int t = block; t < block + kBlock && t < txns; ++t) {
        const std::vector<int> group = group_of(next_relstore);
        const std::string state = payload.substr(0, 290) + std::to_string(1000000 + t);
        relstore::TransactionMetaData txn{"bench", "write", ""};
        const uint64_t trips0 = storage->stats().round_trips;
        const auto t0 = Clock::now();
        inst->tpc_begin(txn);
        for (int i : group) {
          inst->store(Oid(static_cast<uint64_t>(i)), serial[static_cast<size_t>(i)], state, txn);
        }
        inst->tpc_vote(txn);
        const Tid tid = inst->tpc_finish(txn);
        rw.push_back(micros(t0));
        trip_count += storage->stats().round_trips - trips0;
        for (int i : group) serial[static_cast<size_t>(i)] = tid;
        if (raw_tid <= tid.sql()) raw_tid = tid.sql() + 1000000;
      }
      // The raw transactions write the same shape to objects relstore never touches.
      for (int t = block; t < block + kBlock && t < txns; ++t) {
        const std::vector<int> group = group_of(next_raw);
        const std::string state = payload.substr(0, 290) + std::to_string(1000000 + t);
        const std::string tid_text = std::to_string(++raw_tid);
        const auto t0 = Clock::now();
        const std::string lit = literal(*raw, state);
        std::string sql;
        if (hp) {
          sql =
              "START TRANSACTION; "
              "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, "
              "extension) VALUES (" +
              tid_text +
              ", FALSE, FALSE, 'bench', 'write', ''); "
              "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) VALUES ";
          for (int k = 0; k < n; ++k) {
            sql += (k ? "," : "") + std::string("(") + std::to_string(10000000 + group[k]) + "," +
                   tid_text + ",0,'0123456789abcdef0123456789abcdef'," +
                   std::to_string(state.size()) + "," + lit + ")";
          }
          sql += "; INSERT INTO current_object (zoid, tid) VALUES ";
          for (int k = 0; k < n; ++k) {
            sql += (k ? "," : "") + std::string("(") + std::to_string(10000000 + group[k]) + "," +
                   tid_text + ")";
          }
          sql += " ON DUPLICATE KEY UPDATE tid = VALUES(tid); COMMIT";
        } else {
          sql =
              "START TRANSACTION; INSERT INTO object_state (zoid, tid, state_size, state) VALUES ";
          for (int k = 0; k < n; ++k) {
            sql += (k ? "," : "") + std::string("(") + std::to_string(10000000 + group[k]) + "," +
                   tid_text + "," + std::to_string(state.size()) + "," + lit + ")";
          }
          sql +=
              " ON DUPLICATE KEY UPDATE tid = VALUES(tid), state_size = VALUES(state_size), "
              "state = VALUES(state); COMMIT";
        }
        run(*stmt, sql);
        xw.push_back(micros(t0));
        if (hp || n != 20) continue;
        // The same rows staged through a temporary table first, as relstore's MySQL vote
        // does: the cost of the staging alone.
        const auto t1 = Clock::now();
        std::string staged = "START TRANSACTION; INSERT INTO raw_temp (zoid, state) VALUES ";
        for (int k = 0; k < n; ++k) {
          staged += (k ? "," : "") + std::string("(") + std::to_string(10000000 + group[k]) + "," +
                    literal(*raw, state) + ")";
        }
        staged +=
            "; INSERT INTO object_state (zoid, tid, state_size, state) SELECT t.zoid, " + tid_text +
            ", LENGTH(t.state), t.state FROM raw_temp t ON DUPLICATE KEY UPDATE tid = " + tid_text +
            ", state_size = LENGTH(t.state), state = t.state; "
            "DELETE FROM raw_temp; COMMIT";
        run(*stmt, staged);
        tw.push_back(micros(t1));
      }
    }
    if (n == 20 && !hp) f.w20_raw_temp = median(tw);
    (n == 20 ? f.w20_relstore : f.w1_relstore) = median(rw);
    (n == 20 ? f.w20_raw : f.w1_raw) = median(xw);
    (n == 20 ? f.trips_20 : f.trips_1) = static_cast<double>(trip_count) / txns;
  }
  if (sink == 42) std::printf(" ");
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string uri;
  int objects = 5000, rounds = 5, txns = 500;
  if (!bench::parse_args(argc, argv,
                         {{"--objects", &objects}, {"--rounds", &rounds}, {"--txns", &txns}},
                         "RELSTORE_TEST_MYSQL_URI", uri,
                         "mysql_ratios mysql://user:pw@host:port/db [--objects N] [--rounds R] "
                         "[--txns T]")) {
    return 2;
  }
  try {
    const std::string date = today();
    std::printf(
        "MySQL/MariaDB, %d objects of 300 bytes, %d load rounds, %d write transactions "
        "per size (%s)\n\n",
        objects, rounds, txns, date.c_str());
    std::printf(
        "| mode | measure | relstore | raw | ratio | round trips |\n"
        "|---|---|---:|---:|---:|---:|\n");
    for (bool hp : {false, true}) {
      const Figures f = measure(uri, hp, objects, rounds, txns);
      const char* mode = hp ? "HP" : "HF";
      std::printf("| %s | a raw round trip, DO 1 (µs, median) | | %.0f | | 1 |\n", mode,
                  f.round_trip);
      std::printf(
          "| %s | load, uncached (µs/object, median of rounds) | %.1f | %.1f | %.2f× | 1 |\n", mode,
          f.load_relstore, f.load_raw, f.load_relstore / f.load_raw);
      std::printf(
          "| %s | 20-object write transaction (µs, median) | %.0f | %.0f | %.2f× | %.1f |\n", mode,
          f.w20_relstore, f.w20_raw, f.w20_relstore / f.w20_raw, f.trips_20);
      if (!hp) {
        std::printf(
            "| %s | 20-object write, raw staged through a temporary table (µs, median) "
            "| %.0f | %.0f | %.2f× | %.1f |\n",
            mode, f.w20_relstore, f.w20_raw_temp, f.w20_relstore / f.w20_raw_temp, f.trips_20);
      }
      std::printf("| %s | 1-object write transaction (µs, median) | %.0f | %.0f | %.2f× | %.1f |\n",
                  mode, f.w1_relstore, f.w1_raw, f.w1_relstore / f.w1_raw, f.trips_1);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mysql_ratios: %s\n", relstore::redact_secrets(e.what()).c_str());
    return 1;
  }
  return 0;
}
