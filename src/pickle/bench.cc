// bench_decode: the figure json-mirror.md sets a target for (mean and p95 µs per record),
// and its text for `relstore json-mirror bench`.
#include <algorithm>
#include <chrono>
#include <cstdio>

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
  if (items.empty()) return stats;

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
  // Each record is timed once per pass; its figure is the median of its timings. On a shared
  // machine a pass is now and then descheduled for milliseconds, which would otherwise land
  // on whichever record was being decoded.
  using Steady = std::chrono::steady_clock;
  const size_t n = items.size();
  std::vector<double> samples(n * static_cast<size_t>(stats.passes));
  for (int pass = 0; pass < stats.passes; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      const auto t0 = Steady::now();
      try {
        decoder.decode(items[i].data, out, options);
      } catch (const PickleError&) {
        // counted in the warm-up pass
      }
      samples[i * static_cast<size_t>(stats.passes) + static_cast<size_t>(pass)] =
          std::chrono::duration<double, std::micro>(Steady::now() - t0).count();
    }
  }
  std::vector<double> us(n);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto first = samples.begin() + static_cast<std::ptrdiff_t>(i * stats.passes);
    const auto mid = first + stats.passes / 2;
    std::nth_element(first, mid, first + stats.passes);
    us[i] = *mid;
    total += us[i];
  }
  std::sort(us.begin(), us.end());
  auto percentile = [&](double q) {
    return us[std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n)))];
  };
  stats.mean_us = total / static_cast<double>(n);
  stats.p50_us = percentile(0.50);
  stats.p95_us = percentile(0.95);
  stats.max_us = us.back();
  stats.mb_per_s = total > 0 ? static_cast<double>(stats.bytes) / total : 0;  // bytes/µs = MB/s
  return stats;
}

std::string format_bench_stats(const DecodeBenchStats& s, bool json) {
  char buf[512];
  if (json) {
    std::snprintf(buf, sizeof buf,
                  "{\"records\": %llu, \"errors\": %llu, \"mean_us\": %.3f, \"p50_us\": %.3f, "
                  "\"p95_us\": %.3f, \"max_us\": %.3f, \"mb_per_s\": %.1f, \"bytes\": %llu, "
                  "\"passes\": %d}\n",
                  static_cast<unsigned long long>(s.records),
                  static_cast<unsigned long long>(s.errors), s.mean_us, s.p50_us, s.p95_us,
                  s.max_us, s.mb_per_s, static_cast<unsigned long long>(s.bytes), s.passes);
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "records      %llu (%.1f MB)\n"
                "errors       %llu\n"
                "mean         %.2f us\n"
                "p50          %.2f us\n"
                "p95          %.2f us\n"
                "max          %.2f us\n"
                "throughput   %.1f MB/s\n"
                "(per record: median of %d timed passes after a warm-up; one thread; JSON text and "
                "refs included)\n",
                static_cast<unsigned long long>(s.records), static_cast<double>(s.bytes) / 1e6,
                static_cast<unsigned long long>(s.errors), s.mean_us, s.p50_us, s.p95_us, s.max_us,
                s.mb_per_s, s.passes);
  std::string text = buf;
  for (const std::string& e : s.sample_errors) text += "error: " + e + "\n";
  return text;
}

}  // namespace relstore
