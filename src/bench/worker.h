// The part of `relstore bench` that runs inside each worker process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "relstore/bench.h"

namespace relstore::bench {

// What one worker measured in one test.
struct WorkerReport {
  long ops = 0;   // objects written or read
  long txns = 0;  // committed transactions (write tests)
  long conflicts = 0;
  // When the measured part began and ended, in seconds of the machine's monotonic clock,
  // which all processes share: concurrent workers are timed over one window.
  double start = 0, end = 0;
  double round_trips = 0;  // server round trips during the test
  std::vector<double> latencies_us;
};

enum class Test { add, update, cold_read, hot_read, conflicts };
const char* test_name(Test t);
constexpr Test kAllTests[] = {Test::add, Test::update, Test::cold_read, Test::hot_read,
                              Test::conflicts};

// One worker: owns its objects, runs the tests in order when told to start each.
class Worker {
 public:
  Worker(const BenchConfig& config, int objects_per_txn, std::vector<uint64_t> shared_oids);
  ~Worker();
  WorkerReport run(Test test);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Report lines on the pipe between a worker and the coordinator.
std::string encode(const WorkerReport& r);
WorkerReport decode(const std::string& line);

}  // namespace relstore::bench
