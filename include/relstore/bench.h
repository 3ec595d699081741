// `relstore bench`: a zodbshootout-style benchmark of one storage.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace relstore {

struct BenchConfig {
  std::string uri;
  std::vector<int> objects_per_txn = {1, 5, 20};
  std::vector<int> concurrency = {1, 4};  // worker processes
  int transactions = 200;                 // per worker and test
  size_t object_size = 300;  // bytes of each object's state (a pickle of that many bytes)
};

struct BenchResult {
  std::string backend;
  std::string test;  // add, update, cold_read, hot_read, conflicts
  int objects_per_txn = 0;
  int concurrency = 0;
  double ops_per_s = 0;      // objects written or read per second, all workers together
  double median_txn_us = 0;  // median transaction (write tests) or load (read tests) time
  std::optional<double> round_trips_per_txn;  // when the backend counts them
  long conflicts = 0;                         // retried conflicts (conflicts test)
};

// Runs every test for every objects_per_txn × concurrency in fresh objects of the database
// (which must be writable; existing data is left alone). Each worker is a separate process.
// `on_result` is called as each figure is ready.
std::vector<BenchResult> run_bench(const BenchConfig& config,
                                   const std::function<void(const BenchResult&)>& on_result = {});

std::string format_bench_table(const std::vector<BenchResult>& results);
std::string format_bench_json(const std::vector<BenchResult>& results);
// The header line of the table, printed before streaming rows.
std::string bench_table_header();
std::string bench_table_row(const BenchResult& r);

}  // namespace relstore
