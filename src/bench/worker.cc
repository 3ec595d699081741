#include "bench/worker.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>

#include "bench/record.h"
#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore::bench {
namespace {

using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// steady_clock is CLOCK_MONOTONIC on Linux: one clock for every process of the machine.
double seconds_of(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// Hot loads take a fraction of a microsecond, less than reading the clock twice: they are
// timed in groups, each group giving its mean as the latency of its loads.
constexpr size_t kHotGroup = 100;

}  // namespace

const char* test_name(Test t) {
  switch (t) {
    case Test::add:
      return "add";
    case Test::update:
      return "update";
    case Test::cold_read:
      return "cold_read";
    case Test::hot_read:
      return "hot_read";
    case Test::conflicts:
      return "conflicts";
  }
  return "?";
}

struct Worker::State {
  const BenchConfig& config;
  int n;
  std::vector<uint64_t> shared;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<StorageInstance> inst;
  std::vector<Oid> mine;
  std::string payload;
  std::mt19937_64 rng{std::random_device{}()};

  Bytes state(long serial) {
    // A different state per write, so no layer can skip an unchanged one.
    Bytes s = payload;
    const std::string tag = std::to_string(serial);
    s.replace(0, tag.size(), tag);
    return bench_record(s);
  }
};

Worker::Worker(const BenchConfig& config, int objects_per_txn, std::vector<uint64_t> shared)
    : s_(new State{config, objects_per_txn, std::move(shared), nullptr, nullptr, {}, {}}) {
  s_->storage = open_storage(config.uri);
  s_->inst = s_->storage->new_instance();
  s_->payload.resize(config.object_size);
  for (auto& c : s_->payload) c = static_cast<char>('a' + s_->rng() % 26);
}

Worker::~Worker() = default;

WorkerReport Worker::run(Test test) {
  State& s = *s_;
  WorkerReport r;
  const uint64_t trips0 = s.storage->stats().round_trips;
  const auto t0 = Clock::now();
  const int txns = s.config.transactions;
  switch (test) {
    case Test::add:
      for (int t = 0; t < txns; ++t) {
        const auto t1 = Clock::now();
        s.inst->poll_invalidations();  // as ZODB does when a transaction begins
        TransactionMetaData meta{"bench", "add", ""};
        std::vector<Oid> oids;
        for (int i = 0; i < s.n; ++i) oids.push_back(s.inst->new_oid());
        s.inst->tpc_begin(meta);
        for (Oid oid : oids) s.inst->store(oid, std::nullopt, s.state(t), meta);
        s.inst->tpc_vote(meta);
        s.inst->tpc_finish(meta);
        s.mine.insert(s.mine.end(), oids.begin(), oids.end());
        r.latencies_us.push_back(micros_since(t1));
        r.ops += s.n;
        ++r.txns;
      }
      break;
    case Test::update:
      for (int t = 0; t < txns; ++t) {
        const auto t1 = Clock::now();
        s.inst->poll_invalidations();
        TransactionMetaData meta{"bench", "update", ""};
        std::vector<std::pair<Oid, Tid>> group;
        for (int i = 0; i < s.n; ++i) {
          const Oid oid = s.mine[static_cast<size_t>(t * s.n + i)];
          group.emplace_back(oid, s.inst->load(oid).tid);
        }
        s.inst->tpc_begin(meta);
        for (auto [oid, serial] : group) s.inst->store(oid, serial, s.state(t + 1), meta);
        s.inst->tpc_vote(meta);
        s.inst->tpc_finish(meta);
        r.latencies_us.push_back(micros_since(t1));
        r.ops += s.n;
        ++r.txns;
      }
      break;
    case Test::cold_read: {
      // A new storage with no cache: every load goes to the database.
      auto parsed = StorageUri::parse(s.config.uri);
      auto options = parsed.options();
      options.cache_mb = 0;
      auto cold = open_storage(parsed, options);
      auto inst = cold->new_instance();
      inst->poll_invalidations();
      const uint64_t cold_trips0 = cold->stats().round_trips;
      // The loads alone: not the connecting, schema checks and first poll above.
      const auto loads0 = Clock::now();
      for (Oid oid : s.mine) {
        const auto t1 = Clock::now();
        inst->load(oid);
        r.latencies_us.push_back(micros_since(t1));
        ++r.ops;
      }
      const auto loads1 = Clock::now();
      r.round_trips = static_cast<double>(cold->stats().round_trips - cold_trips0);
      r.start = seconds_of(loads0);
      r.end = seconds_of(loads1);
      return r;
    }
    case Test::hot_read:
      // The worker's own instance loaded or wrote these objects: the cache answers.
      s.inst->poll_invalidations();
      for (Oid oid : s.mine) s.inst->load(oid);
      r.latencies_us.clear();
      {
        // The second pass alone: the poll and the warm-up pass are not what is measured.
        const auto loads0 = Clock::now();
        for (size_t i = 0; i < s.mine.size(); i += kHotGroup) {
          const size_t n = std::min(kHotGroup, s.mine.size() - i);
          const auto t1 = Clock::now();
          for (size_t j = i; j < i + n; ++j) s.inst->load(s.mine[j]);
          r.latencies_us.insert(r.latencies_us.end(), n, micros_since(t1) / static_cast<double>(n));
          r.ops += static_cast<long>(n);
        }
        const auto loads1 = Clock::now();
        r.start = seconds_of(loads0);
        r.end = seconds_of(loads1);
      }
      return r;
    case Test::conflicts: {
      // A transaction's latency runs from its first attempt to the commit that succeeds,
      // retries included.
      auto t1 = Clock::now();
      for (int t = 0; t < txns;) {
        s.inst->poll_invalidations();
        TransactionMetaData meta{"bench", "conflict", ""};
        std::vector<std::pair<Oid, Tid>> group;
        for (uint64_t oid : s.shared) group.emplace_back(Oid(oid), s.inst->load(Oid(oid)).tid);
        s.inst->tpc_begin(meta);
        try {
          for (auto [oid, serial] : group) s.inst->store(oid, serial, s.state(t), meta);
          s.inst->tpc_vote(meta);
          s.inst->tpc_finish(meta);
        } catch (const StorageError& e) {
          s.inst->tpc_abort(meta);
          if (!e.retryable()) throw;
          ++r.conflicts;
          continue;
        }
        r.latencies_us.push_back(micros_since(t1));
        t1 = Clock::now();
        r.ops += static_cast<long>(group.size());
        ++r.txns;
        ++t;
      }
      break;
    }
  }
  const auto t_end = Clock::now();
  r.start = seconds_of(t0);
  r.end = seconds_of(t_end);
  r.round_trips = static_cast<double>(s.storage->stats().round_trips - trips0);
  return r;
}

std::string encode(const WorkerReport& r) {
  std::ostringstream out;
  out.precision(17);
  out << r.ops << ' ' << r.txns << ' ' << r.conflicts << ' ' << r.start << ' ' << r.end << ' '
      << r.round_trips << ' ' << r.latencies_us.size();
  for (double l : r.latencies_us) out << ' ' << l;
  return out.str();
}

WorkerReport decode(const std::string& line) {
  std::istringstream in(line);
  WorkerReport r;
  size_t n = 0;
  in >> r.ops >> r.txns >> r.conflicts >> r.start >> r.end >> r.round_trips >> n;
  r.latencies_us.resize(n);
  for (auto& l : r.latencies_us) in >> l;
  if (!in) throw StorageError("bench: a worker sent a malformed report");
  return r;
}

}  // namespace relstore::bench
