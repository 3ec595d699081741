// Progress of long work (convert, rebuilds): a bar on a terminal, log lines otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace relstore {

struct ProgressCounts {
  uint64_t transactions = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t total_transactions = 0;  // 0: unknown, no percentage or ETA
  double seconds = 0;
};

class ProgressPrinter {
 public:
  // Draws a bar when `out` is a terminal; otherwise prints a line every `interval_s`.
  explicit ProgressPrinter(FILE* out, double interval_s = 5.0);
  void update(const ProgressCounts& p);
  // Clears the bar, if any.
  void done();

  // "12,345 transactions, 234,567 records, 12.3 MB, 45,678 records/s" (+ " ETA m:ss").
  static std::string describe(const ProgressCounts& p);

 private:
  FILE* out_;
  bool tty_;
  double interval_;
  double last_ = -1;
  bool drawn_ = false;
};

// 1234567 -> "1,234,567".
std::string grouped(uint64_t n);

}  // namespace relstore
