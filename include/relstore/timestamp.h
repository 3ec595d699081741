// ZODB's TimeStamp: the time encoding inside every TID (design.md §5).
#pragma once

#include <cstdint>
#include <string>

#include "relstore/types.h"

namespace relstore {

// A UTC time packed into 64 bits exactly as ZODB's persistent.TimeStamp does: the high
// 32 bits count minutes since 1900-01-01 with every month 31 days long, the low 32 bits
// hold trunc(seconds * 2**32 / 60).
class TimeStamp {
 public:
  constexpr explicit TimeStamp(uint64_t raw) : raw_(raw) {}
  explicit TimeStamp(Tid tid) : raw_(tid.value()) {}
  // `second` may carry a fraction; values are not range checked beyond what ZODB does.
  TimeStamp(int year, int month, int day, int hour, int minute, double second);
  // The TimeStamp of a Unix time, as ZODB's newTid computes it (gmtime + t % 60).
  static TimeStamp from_unix(double seconds);

  uint64_t raw() const { return raw_; }
  Tid tid() const { return Tid(raw_); }

  int year() const;
  int month() const;
  int day() const;
  int hour() const;
  int minute() const;
  double second() const;
  // Seconds since the Unix epoch (what ZODB's timeTime() returns).
  double unix_time() const;

  // This stamp if it is later than `other`, else the smallest stamp later than `other`.
  TimeStamp later_than(TimeStamp other) const;

  // "YYYY-MM-DD HH:MM:SS.ffffff", as ZODB prints a TimeStamp.
  std::string str() const;

  friend bool operator==(TimeStamp a, TimeStamp b) { return a.raw_ == b.raw_; }

 private:
  uint64_t raw_;
};

// The TID a commit gets: the clock's TimeStamp, or last + 1 when that is not later.
Tid next_tid(double unix_now, Tid last);

}  // namespace relstore
