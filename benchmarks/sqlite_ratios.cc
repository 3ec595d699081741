// relstore on SQLite against the raw SQLite C API, in one process and one run, on the same
// database file (docs/benchmarks.md). Prints a table and exits 0; not a test.
//
//   sqlite_ratios [--objects N] [--rounds R]
//
// 1. load: relstore `load` of distinct objects with the state cache off, vs a raw prepared
//    `SELECT state, tid FROM current_object_state WHERE zoid = ?` in a read transaction.
// 2. 1-object write transaction: relstore tpc_begin…tpc_finish, vs a raw upsert + commit.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "args.h"
#include "relstore/storage.h"
#include "stats.h"

namespace {

using namespace bench;

void check(int rc, sqlite3* db) {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
    std::fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int objects = 20000, rounds = 5;
  std::string unused;
  if (!bench::parse_args(argc, argv, {{"--objects", &objects}, {"--rounds", &rounds}}, nullptr,
                         unused, "sqlite_ratios [--objects N] [--rounds R]")) {
    return 2;
  }
  const auto dir = std::filesystem::temp_directory_path() / "relstore-sqlite-ratios";
  std::filesystem::remove_all(dir);
  const std::string uri = "sqlite://" + dir.string() + "?cache_mb=0";
  auto storage = relstore::open_storage(uri);
  auto inst = storage->new_instance();
  const std::string payload(300, 'p');

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

  sqlite3* raw = nullptr;
  check(sqlite3_open_v2((dir / "main.sqlite3").c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr), raw);
  sqlite3_stmt* select = nullptr;
  check(sqlite3_prepare_v2(raw, "SELECT state, tid FROM current_object_state WHERE zoid = ?", -1,
                           &select, nullptr),
        raw);

  std::vector<double> relstore_load, raw_load;
  size_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    inst->poll_invalidations();
    auto t0 = Clock::now();
    for (int i = 1; i <= objects; ++i) {
      sink += inst->load(relstore::Oid(static_cast<uint64_t>(i))).data.size();
    }
    relstore_load.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                            objects);

    check(sqlite3_exec(raw, "BEGIN", nullptr, nullptr, nullptr), raw);
    t0 = Clock::now();
    for (int i = 1; i <= objects; ++i) {
      sqlite3_bind_int64(select, 1, i);
      check(sqlite3_step(select), raw);
      // Copy the bytes out, as any caller of a load must.
      std::string state(static_cast<const char*>(sqlite3_column_blob(select, 0)),
                        static_cast<size_t>(sqlite3_column_bytes(select, 0)));
      sink += state.size() + static_cast<size_t>(sqlite3_column_int64(select, 1) & 1);
      sqlite3_reset(select);
    }
    raw_load.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                       objects);
    check(sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr), raw);
  }

  // 1-object write transactions on a new object each time (relstore's OID allocation
  // included), against a raw upsert of a new row in its own transaction; the two sides
  // alternate in blocks of 100, and the raw connection checkpoints as relstore's does.
  check(sqlite3_exec(raw,
                     "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 10000; "
                     "CREATE TABLE IF NOT EXISTS raw_write "
                     "(zoid INTEGER PRIMARY KEY, tid INTEGER, state BLOB)",
                     nullptr, nullptr, nullptr),
        raw);
  sqlite3_stmt* upsert = nullptr;
  check(sqlite3_prepare_v2(
            raw,
            "INSERT INTO raw_write (zoid, tid, state) VALUES (?, ?, ?) "
            "ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, state = excluded.state",
            -1, &upsert, nullptr),
        raw);
  sqlite3_stmt *begin = nullptr, *commit = nullptr;
  sqlite3_prepare_v2(raw, "BEGIN IMMEDIATE", -1, &begin, nullptr);
  sqlite3_prepare_v2(raw, "COMMIT", -1, &commit, nullptr);
  const int writes = 2000;
  constexpr int kBlock = 100;
  std::vector<double> relstore_write, raw_write;
  for (int done = 0; done < writes; done += kBlock) {
    for (int i = 0; i < kBlock; ++i) {
      relstore::TransactionMetaData txn{"bench", "write", ""};
      const auto t0 = Clock::now();
      const relstore::Oid oid = inst->new_oid();
      inst->tpc_begin(txn);
      inst->store(oid, std::nullopt, payload, txn);
      inst->tpc_vote(txn);
      inst->tpc_finish(txn);
      relstore_write.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    for (int i = done; i < done + kBlock; ++i) {
      const auto t0 = Clock::now();
      check(sqlite3_step(begin), raw);
      sqlite3_reset(begin);
      sqlite3_bind_int64(upsert, 1, 1000000 + i);
      sqlite3_bind_int64(upsert, 2, i);
      sqlite3_bind_blob(upsert, 3, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
      check(sqlite3_step(upsert), raw);
      sqlite3_reset(upsert);
      check(sqlite3_step(commit), raw);
      sqlite3_reset(commit);
      raw_write.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  for (auto* s : {select, upsert, begin, commit}) sqlite3_finalize(s);
  sqlite3_close(raw);

  const double rl = median(relstore_load), xl = median(raw_load);
  const double rw = median(relstore_write), xw = median(raw_write);
  std::printf("SQLite, %d objects of %zu bytes, %d rounds (sink %zu)\n", objects, payload.size(),
              rounds, sink % 10);
  std::printf("| measure | relstore | raw SQLite | ratio |\n|---|---:|---:|---:|\n");
  std::printf("| load, uncached (ns/object, median of rounds) | %.0f | %.0f | %.2f× |\n", rl, xl,
              rl / xl);
  std::printf("| 1-object write transaction (µs, median of %d) | %.1f | %.1f | %.2f× |\n", writes,
              rw, xw, rw / xw);
  std::filesystem::remove_all(dir);
  return 0;
}
