// The coordinator of `relstore bench`: forks worker processes, starts each test in all of
// them at once, and combines their reports.
#include "relstore/bench.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "bench/record.h"
#include "bench/worker.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore {
namespace {

using bench::Test;
using bench::WorkerReport;

// Two pipes per worker: commands down, reports up.
struct Child {
  pid_t pid = -1;
  int command_fd = -1;
  FILE* reports = nullptr;
};

std::string read_line(FILE* f) {
  std::string line;
  int c;
  while ((c = std::fgetc(f)) != EOF && c != '\n') line += static_cast<char>(c);
  if (c == EOF && line.empty()) throw StorageError("bench: a worker exited early");
  return line;
}

[[noreturn]] void worker_main(const BenchConfig& config, int n, const std::vector<uint64_t>& shared,
                              int command_fd, int report_fd) {
  FILE* out = fdopen(report_fd, "w");
  int code = 0;
  try {
    bench::Worker worker(config, n, shared);
    for (Test test : bench::kAllTests) {
      std::fprintf(out, "ready\n");
      std::fflush(out);
      char go = 0;
      if (read(command_fd, &go, 1) != 1 || go != 'g') break;
      std::fprintf(out, "%s\n", bench::encode(worker.run(test)).c_str());
      std::fflush(out);
    }
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::fprintf(out, "error %s\n", msg.c_str());
    std::fflush(out);
    code = 1;
  }
  _exit(code);
}

void finish(std::vector<Child>& children) {
  for (Child& c : children) {
    close(c.command_fd);
    std::fclose(c.reports);
    int status = 0;
    waitpid(c.pid, &status, 0);
  }
  children.clear();
}

std::vector<Child> spawn(const BenchConfig& config, int n, int count,
                         const std::vector<uint64_t>& shared) {
  std::vector<Child> children;
  // Workers already started are told to end (their command pipe closes) and waited for.
  auto fail = [&](const char* call, std::initializer_list<int> fds) {
    const std::string message = "bench: starting worker " + std::to_string(children.size() + 1) +
                                " of " + std::to_string(count) + ": " + call +
                                " failed: " + std::strerror(errno);
    for (const int fd : fds) close(fd);
    finish(children);
    throw StorageError(message);
  };
  for (int i = 0; i < count; ++i) {
    int down[2], up[2];
    if (pipe(down) != 0) fail("pipe()", {});
    if (pipe(up) != 0) fail("pipe()", {down[0], down[1]});
    const pid_t pid = fork();
    if (pid < 0) fail("fork()", {down[0], down[1], up[0], up[1]});
    if (pid == 0) {
      for (const Child& c : children) {
        close(c.command_fd);
        std::fclose(c.reports);
      }
      close(down[1]);
      close(up[0]);
      worker_main(config, n, shared, down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    children.push_back({pid, down[1], fdopen(up[0], "r")});
  }
  return children;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

BenchResult combine(const std::string& backend, Test test, int n, int c,
                    const std::vector<WorkerReport>& reports) {
  BenchResult r;
  r.backend = backend;
  r.test = bench::test_name(test);
  r.objects_per_txn = n;
  r.concurrency = c;
  long ops = 0, txns = 0;
  double trips = 0;
  // Throughput over one window, from the first worker's start to the last one's end: each
  // worker's own window would count workers that ran one after another as parallel.
  double start = std::numeric_limits<double>::infinity(), end = 0;
  std::vector<double> latencies;
  for (const auto& w : reports) {
    ops += w.ops;
    txns += w.txns;
    r.conflicts += w.conflicts;
    start = std::min(start, w.start);
    end = std::max(end, w.end);
    trips += w.round_trips;
    latencies.insert(latencies.end(), w.latencies_us.begin(), w.latencies_us.end());
  }
  const double seconds = end - start;
  r.ops_per_s = seconds > 0 ? static_cast<double>(ops) / seconds : 0;
  r.median_txn_us = median(std::move(latencies));
  const bool writes = test == Test::add || test == Test::update || test == Test::conflicts;
  if (trips > 0 && writes && txns > 0) r.round_trips_per_txn = trips / static_cast<double>(txns);
  return r;
}

// Creates the objects every worker of the conflicts test fights over.
std::vector<uint64_t> make_shared_objects(const BenchConfig& config, int n) {
  auto storage = open_storage(config.uri);
  auto inst = storage->new_instance();
  std::vector<uint64_t> oids;
  TransactionMetaData meta{"bench", "setup", ""};
  std::vector<Oid> fresh;
  for (int i = 0; i < n; ++i) fresh.push_back(inst->new_oid());
  inst->tpc_begin(meta);
  for (Oid oid : fresh) {
    inst->store(oid, std::nullopt, bench::bench_record(std::string(config.object_size, 's')), meta);
    oids.push_back(oid.value());
  }
  inst->tpc_vote(meta);
  inst->tpc_finish(meta);
  return oids;  // the storage closes here, before any fork
}

}  // namespace

std::vector<BenchResult> run_bench(const BenchConfig& config,
                                   const std::function<void(const BenchResult&)>& on_result) {
  const StorageUri uri = StorageUri::parse(config.uri);
  // Its workers are processes writing at once; a Data.fs has one writer process (its lock
  // file). Refused before anything is created or written.
  if (uri.scheme == Scheme::file) {
    throw ConfigError(
        "bench: needs a database (sqlite:, postgresql:, mysql:); a file: "
        "storage takes one writer process and bench's workers are several");
  }
  const std::string backend = scheme_name(uri.scheme);
  if (config.transactions <= 0) throw ConfigError("bench: --transactions must be positive");
  // Each worker holds a transaction's states at once (and copies on their way out): a
  // size that cannot fit is a usage error, not a std::bad_alloc half-way through.
  constexpr double kMaxHeldBytes = 8.0 * (1ull << 30);
  for (int n : config.objects_per_txn) {
    for (int c : config.concurrency) {
      const double held = static_cast<double>(config.object_size) * n * c;
      if (held > kMaxHeldBytes) {
        throw ConfigError("bench: --object-size " + std::to_string(config.object_size) +
                          " × --objects-per-txn " + std::to_string(n) + " × --concurrency " +
                          std::to_string(c) + " would hold more than 8 GiB of states at once");
      }
    }
  }
  std::vector<BenchResult> results;
  for (int n : config.objects_per_txn) {
    for (int c : config.concurrency) {
      if (n <= 0 || c <= 0) throw ConfigError("bench: counts must be positive");
      const auto shared = make_shared_objects(config, n);
      std::fflush(nullptr);  // children must not flush the parent's buffered output
      auto children = spawn(config, n, c, shared);
      try {
        for (Test test : bench::kAllTests) {
          for (Child& ch : children) {
            const std::string line = read_line(ch.reports);
            if (line.rfind("error ", 0) == 0) throw StorageError("bench worker: " + line.substr(6));
          }
          for (Child& ch : children) {
            if (write(ch.command_fd, "g", 1) != 1) throw StorageError("bench: a worker is gone");
          }
          std::vector<WorkerReport> reports;
          for (Child& ch : children) {
            const std::string line = read_line(ch.reports);
            if (line.rfind("error ", 0) == 0) throw StorageError("bench worker: " + line.substr(6));
            reports.push_back(bench::decode(line));
          }
          results.push_back(combine(backend, test, n, c, reports));
          if (on_result) on_result(results.back());
        }
      } catch (...) {
        finish(children);
        throw;
      }
      finish(children);
    }
  }
  return results;
}

std::string bench_table_header() {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-10s %-10s %5s %5s %12s %12s %8s %9s\n", "backend", "test",
                "objs", "procs", "objects/s", "median µs", "trips", "conflicts");
  return buf;
}

std::string bench_table_row(const BenchResult& r) {
  char trips[16] = "-";
  if (r.round_trips_per_txn) std::snprintf(trips, sizeof trips, "%.1f", *r.round_trips_per_txn);
  char buf[200];
  std::snprintf(buf, sizeof buf, "%-10s %-10s %5d %5d %12.0f %12.1f %8s %9ld\n", r.backend.c_str(),
                r.test.c_str(), r.objects_per_txn, r.concurrency, r.ops_per_s, r.median_txn_us,
                trips, r.conflicts);
  return buf;
}

std::string format_bench_table(const std::vector<BenchResult>& results) {
  std::string out = bench_table_header();
  for (const auto& r : results) out += bench_table_row(r);
  return out;
}

std::string format_bench_json(const std::vector<BenchResult>& results) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json j = {{"backend", r.backend},
                        {"test", r.test},
                        {"objects_per_txn", r.objects_per_txn},
                        {"concurrency", r.concurrency},
                        {"ops_per_s", r.ops_per_s},
                        {"median_us", r.median_txn_us},
                        {"conflicts", r.conflicts}};
    if (r.round_trips_per_txn) j["round_trips_per_txn"] = *r.round_trips_per_txn;
    all.push_back(j);
  }
  return all.dump(2) + "\n";
}

}  // namespace relstore
