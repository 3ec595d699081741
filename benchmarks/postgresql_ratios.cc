// relstore on PostgreSQL against raw libpq calls doing the same work, in one process and
// one run, on the same server and tables (docs/benchmarks.md). Prints a table; not a test.
//
//   postgresql_ratios [URI] [--objects N] [--rounds R] [--writes W]
//
// URI defaults to $RELSTORE_TEST_POSTGRESQL_URI. The role needs CREATEDB: the benchmark
// works in databases of its own, <db>_ratios_hf and <db>_ratios_hp, which it empties.
//
// 1. load: relstore `load` of distinct objects with the state cache off, vs a raw prepared
//    `SELECT state, tid FROM object_state WHERE zoid = $1` (binary) in a REPEATABLE READ
//    transaction, as relstore's snapshot is.
// 2. 20-object write transaction: relstore tpc_begin…tpc_finish updating 20 objects, vs
//    the minimal raw SQL doing the same writes as issue #3 names it (COPY, insert-select,
//    commit): one message "BEGIN; DELETE FROM temp; COPY temp (binary); INSERT … SELECT …
//    ON CONFLICT DO UPDATE; COMMIT" (two round trips, as relstore's). relstore no longer
//    stages small votes through temp_store, so a leaner raw write is measured too: one
//    prepared upsert from binary arrays (unnest) in autocommit, one round trip.
// 3. 1-object write transaction: relstore vs a raw prepared upsert in autocommit.
// 2 and 3 run twice: as configured (the WAL flush at COMMIT usually dominates), then with
// synchronous_commit=off on both sides, which leaves round trips and server work.
// Write measurements alternate between relstore and raw in blocks, so that a noisy
// neighbour slows both alike. History-free (the raw SQL writes what HF writes); relstore's
// history-preserving medians are printed as well.
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "args.h"
#include "pg_raw.h"
#include "relstore/storage.h"
#include "stats.h"

namespace {

using namespace bench;

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// One relstore transaction updating `oids` (whose serials are in `serials`).
void relstore_write(relstore::StorageInstance& inst, const std::vector<relstore::Oid>& oids,
                    std::vector<relstore::Tid>& serials, const std::string& payload) {
  relstore::TransactionMetaData txn{"bench", "write", ""};
  inst.tpc_begin(txn);
  for (size_t i = 0; i < oids.size(); ++i) inst.store(oids[i], serials[i], payload, txn);
  inst.tpc_vote(txn);
  const relstore::Tid tid = inst.tpc_finish(txn);
  for (auto& s : serials) s = tid;
}

// The same writes in raw SQL: BEGIN, empty the temp table, binary COPY, insert-select
// upsert, COMMIT — one message (the raw SQL issue #3 names). The temp table is emptied as
// relstore empties temp_store for the large votes it still stages (DELETE, and TRUNCATE
// after 256 kB; see adapters/postgresql/store_connection.cc).
void raw_write(PGconn* c, uint64_t first_zoid, int n, int64_t tid, const std::string& payload) {
  static size_t copied = 0;
  const bool truncate = copied > (256u << 10);
  copied = truncate ? 0 : copied;
  copied += static_cast<size_t>(n) * (64 + payload.size());
  const std::string sql =
      std::string("BEGIN; ") + (truncate ? "TRUNCATE" : "DELETE FROM") +
      " raw_temp; COPY raw_temp (zoid, state) FROM STDIN (FORMAT binary); "
      "INSERT INTO object_state (zoid, tid, state_size, state) SELECT zoid, " +
      std::to_string(tid) +
      ", length(state), state FROM raw_temp ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, "
      "state_size = excluded.state_size, state = excluded.state; COMMIT";
  if (!PQsendQuery(c, sql.c_str())) die("raw write", c);
  while (PGresult* r = PQgetResult(c)) {
    const auto st = PQresultStatus(r);
    PQclear(r);
    if (st == PGRES_FATAL_ERROR) die("raw write", c);
    if (st != PGRES_COPY_IN) continue;
    std::string data("PGCOPY\n\377\r\n\0", 11);
    data.append(8, '\0');
    for (int i = 0; i < n; ++i) {
      put_be(data, 2, 2);
      put_be(data, 8, 4);
      put_be(data, first_zoid + static_cast<uint64_t>(i), 8);
      put_be(data, payload.size(), 4);
      data += payload;
    }
    put_be(data, 0xffff, 2);
    if (PQputCopyData(c, data.data(), static_cast<int>(data.size())) != 1 ||
        PQputCopyEnd(c, nullptr) != 1) {
      die("raw COPY", c);
    }
  }
}

// A binary one-dimensional array of `n` elements (PostgreSQL's array send format).
std::string binary_array(uint32_t element_type, const std::vector<std::string>& elements) {
  std::string out;
  put_be(out, 1, 4);  // dimensions
  put_be(out, 0, 4);  // no NULLs
  put_be(out, element_type, 4);
  put_be(out, elements.size(), 4);
  put_be(out, 1, 4);  // lower bound
  for (const auto& e : elements) {
    put_be(out, e.size(), 4);
    out += e;
  }
  return out;
}

// The same writes as raw_write in one prepared statement: an upsert from unnest of binary
// arrays, in autocommit (one round trip, one commit).
void raw_array_write(PGconn* c, uint64_t first_zoid, int n, int64_t tid,
                     const std::string& payload) {
  std::vector<std::string> zoids, states(static_cast<size_t>(n), payload);
  for (int i = 0; i < n; ++i) {
    zoids.emplace_back();
    put_be(zoids.back(), first_zoid + static_cast<uint64_t>(i), 8);
  }
  const std::string z = binary_array(20, zoids);   // int8
  const std::string s = binary_array(17, states);  // bytea
  std::string t;
  put_be(t, static_cast<uint64_t>(tid), 8);
  const char* values[] = {z.data(), s.data(), t.data()};
  const int lengths[] = {static_cast<int>(z.size()), static_cast<int>(s.size()), 8};
  const int formats[] = {1, 1, 1};
  PGresult* res = PQexecPrepared(c, "array_upsert", 3, values, lengths, formats, 1);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) die("raw array upsert", c);
  PQclear(res);
}

struct WriteFigures {
  double relstore20, raw20, raw20_arrays, relstore1, raw1;  // medians, µs
  double trips_per_txn;                                     // relstore's
};

// Write transactions of 20 objects (oids 1..20) and of 1 object (oid 21) through relstore,
// and the same writes through raw SQL on other oids, alternating in blocks of 25 so that a
// noisy neighbour slows both alike.
WriteFigures measure_writes(relstore::Storage& storage, PGconn* raw, int writes,
                            const std::string& payload) {
  auto inst = storage.new_instance();
  std::vector<relstore::Oid> twenty, one{relstore::Oid(21)};
  for (uint64_t i = 1; i <= 20; ++i) twenty.push_back(relstore::Oid(i));
  inst->poll_invalidations();
  std::vector<relstore::Tid> twenty_serials, one_serial{inst->load(relstore::Oid(21)).tid};
  for (auto oid : twenty) twenty_serials.push_back(inst->load(oid).tid);
  inst->release_snapshot();
  const uint64_t trips0 = storage.stats().round_trips;
  std::vector<double> rs20, raw20, raw20_arrays, rs1, raw1;
  static int64_t raw_tid = 1;
  constexpr int kBlock = 25;
  for (int done = 0; done < writes; done += kBlock) {
    for (int i = 0; i < kBlock; ++i) {
      const auto t0 = Clock::now();
      relstore_write(*inst, twenty, twenty_serials, payload);
      rs20.push_back(micros(t0));
    }
    for (int i = 0; i < kBlock; ++i) {
      const auto t0 = Clock::now();
      raw_write(raw, 1000001, 20, raw_tid++, payload);
      raw20.push_back(micros(t0));
    }
    for (int i = 0; i < kBlock; ++i) {
      const auto t0 = Clock::now();
      raw_array_write(raw, 1000001, 20, raw_tid++, payload);
      raw20_arrays.push_back(micros(t0));
    }
    for (int i = 0; i < kBlock; ++i) {
      const auto t0 = Clock::now();
      relstore_write(*inst, one, one_serial, payload);
      rs1.push_back(micros(t0));
    }
    for (int i = 0; i < kBlock; ++i) {
      std::string zoid, tid;
      put_be(zoid, 2000001, 8);
      put_be(tid, static_cast<uint64_t>(raw_tid++), 8);
      const char* values[] = {zoid.data(), tid.data(), payload.data()};
      const int lengths[] = {8, 8, static_cast<int>(payload.size())};
      const int formats[] = {1, 1, 1};
      const auto t0 = Clock::now();
      PGresult* res = PQexecPrepared(raw, "upsert", 3, values, lengths, formats, 1);
      if (PQresultStatus(res) != PGRES_COMMAND_OK) die("raw upsert", raw);
      PQclear(res);
      raw1.push_back(micros(t0));
    }
  }
  return {median(rs20),
          median(raw20),
          median(raw20_arrays),
          median(rs1),
          median(raw1),
          static_cast<double>(storage.stats().round_trips - trips0) / (2.0 * writes)};
}

void print_writes(const WriteFigures& f, const char* note) {
  std::printf("| 20-object write transaction (µs, median%s) | %.0f | %.0f | %.2f× |\n", note,
              f.relstore20, f.raw20, f.relstore20 / f.raw20);
  std::printf("| 20-object write, raw as one array upsert (µs, median%s) | %.0f | %.0f | %.2f× |\n",
              note, f.relstore20, f.raw20_arrays, f.relstore20 / f.raw20_arrays);
  std::printf("| 1-object write transaction (µs, median%s) | %.0f | %.0f | %.2f× |\n", note,
              f.relstore1, f.raw1, f.relstore1 / f.raw1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string server;
  int objects = 20000, rounds = 5, writes = 400;
  if (!bench::parse_args(argc, argv,
                         {{"--objects", &objects}, {"--rounds", &rounds}, {"--writes", &writes}},
                         "RELSTORE_TEST_POSTGRESQL_URI", server,
                         "postgresql_ratios postgresql://user:pw@host:port/db [--objects N] "
                         "[--rounds R] [--writes W]")) {
    return 2;
  }
  const std::string payload(300, 'p');
  const std::string hf_uri = bench_database(server, "_ratios", false);
  auto storage = relstore::open_storage(hf_uri + "&cache_mb=0");
  auto inst = storage->new_instance();

  // Fill: objects 1..N in transactions of 100.
  for (int base = 1; base <= objects; base += 100) {
    relstore::TransactionMetaData txn{"bench", "fill", ""};
    inst->tpc_begin(txn);
    for (int i = base; i < base + 100 && i <= objects; ++i) {
      inst->store(relstore::Oid(static_cast<uint64_t>(i)), std::nullopt, payload, txn);
    }
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  PGconn* raw = connect(hf_uri);
  exec(raw, "VACUUM ANALYZE object_state");
  PGresult* prep =
      PQprepare(raw, "load", "SELECT state, tid FROM object_state WHERE zoid = $1", 0, nullptr);
  if (PQresultStatus(prep) != PGRES_COMMAND_OK) die("prepare", raw);
  PQclear(prep);

  // 1. Loads, alternating rounds.
  std::vector<double> relstore_load, raw_load;
  size_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    inst->poll_invalidations();
    auto t0 = Clock::now();
    for (int i = 1; i <= objects; ++i) {
      sink += inst->load(relstore::Oid(static_cast<uint64_t>(i))).data.size();
    }
    relstore_load.push_back(micros(t0) / objects);
    inst->release_snapshot();

    exec(raw, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    t0 = Clock::now();
    for (int i = 1; i <= objects; ++i) {
      std::string key;
      put_be(key, static_cast<uint64_t>(i), 8);
      const char* values[] = {key.data()};
      const int lengths[] = {8};
      const int formats[] = {1};
      PGresult* res = PQexecPrepared(raw, "load", 1, values, lengths, formats, 1);
      if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) die("raw load", raw);
      // Copy the bytes out, as any caller of a load must.
      std::string state(PQgetvalue(res, 0, 0), static_cast<size_t>(PQgetlength(res, 0, 0)));
      sink += state.size() + static_cast<size_t>(PQgetvalue(res, 0, 1)[7] & 1);
      PQclear(res);
    }
    raw_load.push_back(micros(t0) / objects);
    exec(raw, "COMMIT");
  }

  // 2 and 3. Write transactions of 20 and 1 objects.
  // Emptied by DELETE, not ON COMMIT DELETE ROWS, for the reason store_connection.cc gives.
  exec(raw, "CREATE TEMPORARY TABLE raw_temp (zoid BIGINT PRIMARY KEY, state BYTEA)");
  PGresult* up = PQprepare(raw, "upsert",
                           "INSERT INTO object_state (zoid, tid, state_size, state) "
                           "VALUES ($1, $2, length($3::bytea), $3::bytea) ON CONFLICT (zoid) "
                           "DO UPDATE SET tid = excluded.tid, state_size = excluded.state_size, "
                           "state = excluded.state",
                           0, nullptr);
  if (PQresultStatus(up) != PGRES_COMMAND_OK) die("prepare upsert", raw);
  PQclear(up);
  PGresult* array_up =
      PQprepare(raw, "array_upsert",
                "INSERT INTO object_state (zoid, tid, state_size, state) "
                "SELECT t.zoid, $3::bigint, length(t.state), t.state "
                "FROM unnest($1::bigint[], $2::bytea[]) AS t(zoid, state) ON CONFLICT (zoid) "
                "DO UPDATE SET tid = excluded.tid, state_size = excluded.state_size, "
                "state = excluded.state",
                0, nullptr);
  if (PQresultStatus(array_up) != PGRES_COMMAND_OK) die("prepare array upsert", raw);
  PQclear(array_up);
  const WriteFigures durable = measure_writes(*storage, raw, writes, payload);
  // The same without waiting for the WAL flush, on both sides: what is left is round trips
  // and server work, which the flush (milliseconds on this disk) otherwise hides.
  exec(raw, "SET synchronous_commit = off");
  auto async_storage = relstore::open_storage(hf_uri + "&options=-c%20synchronous_commit%3Doff");
  const WriteFigures async = measure_writes(*async_storage, raw, writes, payload);
  PQfinish(raw);

  // History-preserving medians (relstore only).
  const std::string hp_uri = bench_database(server, "_ratios", true);
  auto hp_storage = relstore::open_storage(hp_uri);
  auto hp = hp_storage->new_instance();
  std::vector<relstore::Oid> twenty, one{relstore::Oid(21)};
  for (uint64_t i = 1; i <= 20; ++i) twenty.push_back(relstore::Oid(i));
  std::vector<relstore::Tid> hp20(20, relstore::Tid(0)), hp1(1, relstore::Tid(0));
  relstore_write(*hp, twenty, hp20, payload);
  relstore_write(*hp, one, hp1, payload);
  std::vector<double> hp_rs20, hp_rs1;
  for (int i = 0; i < writes / 2; ++i) {
    auto t0 = Clock::now();
    relstore_write(*hp, twenty, hp20, payload);
    hp_rs20.push_back(micros(t0));
    t0 = Clock::now();
    relstore_write(*hp, one, hp1, payload);
    hp_rs1.push_back(micros(t0));
  }

  const std::string date = today();
  const double rl = median(relstore_load), xl = median(raw_load);
  std::printf(
      "PostgreSQL, %d objects of %zu bytes, %d load rounds, %d write transactions "
      "of each kind (%s, sink %zu)\n\n",
      objects, payload.size(), rounds, writes, date.c_str(), sink % 10);
  std::printf("| measure (history-free) | relstore | raw libpq | ratio |\n|---|---:|---:|---:|\n");
  std::printf("| load, uncached (µs/object, median of rounds) | %.1f | %.1f | %.2f× |\n", rl, xl,
              rl / xl);
  print_writes(durable, "");
  print_writes(async, ", synchronous_commit=off");
  std::printf("\nrelstore round trips per write transaction: %.2f\n", durable.trips_per_txn);
  std::printf(
      "history-preserving, relstore: 1-object %.0f µs, 20-object %.0f µs (medians of "
      "%d)\n",
      median(hp_rs1), median(hp_rs20), writes / 2);
  return 0;
}
