#include "relstore/progress.h"

#include <unistd.h>

#include <algorithm>

namespace relstore {

std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

ProgressPrinter::ProgressPrinter(FILE* out, double interval_s)
    : out_(out), tty_(isatty(fileno(out)) != 0), interval_(tty_ ? 0.2 : interval_s) {}

std::string ProgressPrinter::describe(const ProgressCounts& p) {
  char buf[200];
  const double rate = p.seconds > 0 ? static_cast<double>(p.records) / p.seconds : 0;
  std::snprintf(buf, sizeof buf, "%s transactions, %s records, %.1f MB, %s records/s",
                grouped(p.transactions).c_str(), grouped(p.records).c_str(),
                static_cast<double>(p.bytes) / 1e6, grouped(static_cast<uint64_t>(rate)).c_str());
  std::string out = buf;
  if (p.total_transactions > 0 && p.transactions > 0 && p.transactions < p.total_transactions) {
    const double left = p.seconds * static_cast<double>(p.total_transactions - p.transactions) /
                        static_cast<double>(p.transactions);
    std::snprintf(buf, sizeof buf, ", ETA %d:%02d", static_cast<int>(left) / 60,
                  static_cast<int>(left) % 60);
    out += buf;
  }
  return out;
}

void ProgressPrinter::update(const ProgressCounts& p) {
  if (last_ >= 0 && p.seconds - last_ < interval_) return;
  last_ = p.seconds;
  if (!tty_) {
    std::fprintf(out_, "progress: %s\n", describe(p).c_str());
    std::fflush(out_);
    return;
  }
  const double fraction = p.total_transactions
                              ? std::min(1.0, static_cast<double>(p.transactions) /
                                                  static_cast<double>(p.total_transactions))
                              : 0;
  constexpr int kWidth = 24;
  std::string bar(kWidth, ' ');
  for (int i = 0; i < static_cast<int>(fraction * kWidth); ++i) bar[static_cast<size_t>(i)] = '#';
  std::fprintf(out_, "\r[%s] %3.0f%% %s\x1b[K", bar.c_str(), fraction * 100, describe(p).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressPrinter::done() {
  if (drawn_) std::fprintf(out_, "\r\x1b[K");
  drawn_ = false;
}

}  // namespace relstore
