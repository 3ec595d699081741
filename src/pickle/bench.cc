// bench_decode: the figure json-mirror.md sets a target for (mean and p95 µs per record).
#include <algorithm>
#include <chrono>

#include "relstore/pickle.h"
#include "relstore/storage.h"

namespace relstore {

DecodeBenchStats bench_decode(TransactionIterator& records, int passes,
                              const DecodeOptions& options) {
  struct Item {
    Oid oid;
    Bytes data;
  };
  // Read everything first: the benchmark measures decoding, not file I/O.
  std::vector<Item> items;
  TransactionRecord txn;
  while (records.next(txn)) {
    for (DataRecord& r : txn.records) {
      if (r.data && !r.data->empty()) items.push_back({r.oid, std::move(*r.data)});
    }
  }
  DecodeBenchStats stats;
  stats.passes = std::max(passes, 1);
  stats.records = items.size();
  for (const Item& it : items) stats.bytes += it.data.size();

  RecordDecoder decoder;
  DecodedRecord out;
  // Warm-up pass: counts errors and sizes the decoder's buffers.
  for (const Item& it : items) {
    try {
      decoder.decode(it.data, out, options);
    } catch (const PickleError& e) {
      ++stats.errors;
      if (stats.sample_errors.size() < 10) {
        stats.sample_errors.push_back("oid " + it.oid.hex() + ": " + e.what());
      }
    }
  }
  std::vector<double> us;
  us.reserve(items.size() * static_cast<size_t>(stats.passes));
  double total = 0;
  using Steady = std::chrono::steady_clock;
  for (int pass = 0; pass < stats.passes; ++pass) {
    for (const Item& it : items) {
      const auto t0 = Steady::now();
      try {
        decoder.decode(it.data, out, options);
      } catch (const PickleError&) {
        // counted in the warm-up pass
      }
      const double d = std::chrono::duration<double, std::micro>(Steady::now() - t0).count();
      us.push_back(d);
      total += d;
    }
  }
  if (us.empty()) return stats;
  std::sort(us.begin(), us.end());
  auto pct = [&](double q) {
    const size_t i = std::min(us.size() - 1, static_cast<size_t>(q * static_cast<double>(us.size())));
    return us[i];
  };
  stats.mean_us = total / static_cast<double>(us.size());
  stats.p50_us = pct(0.50);
  stats.p95_us = pct(0.95);
  stats.max_us = us.back();
  stats.mb_per_s = static_cast<double>(stats.bytes) * stats.passes / total;  // bytes/µs = MB/s
  return stats;
}

}  // namespace relstore
