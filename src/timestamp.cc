#include "relstore/timestamp.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace relstore {
namespace {

// 60 / 2**32: one unit of the low word, in seconds (ZODB calls it SCONV).
constexpr double kSecondUnit = 60.0 / 4294967296.0;

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

uint32_t high_word(int year, int month, int day, int hour, int minute) {
  const int64_t v =
      ((((static_cast<int64_t>(year) - 1900) * 12 + month - 1) * 31 + day - 1) * 24 + hour) * 60 +
      minute;
  return static_cast<uint32_t>(v);
}

}  // namespace

TimeStamp::TimeStamp(int year, int month, int day, int hour, int minute, double second) {
  const auto low = static_cast<uint32_t>(second / kSecondUnit);
  raw_ = (static_cast<uint64_t>(high_word(year, month, day, hour, minute)) << 32) | low;
}

TimeStamp TimeStamp::from_unix(double seconds) {
  const auto whole = static_cast<time_t>(std::floor(seconds));
  struct tm t {};
  gmtime_r(&whole, &t);
  return TimeStamp(t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min,
                   std::fmod(seconds, 60.0));
}

int TimeStamp::minute() const { return static_cast<int>((raw_ >> 32) % 60); }
int TimeStamp::hour() const { return static_cast<int>((raw_ >> 32) / 60 % 24); }
int TimeStamp::day() const { return static_cast<int>((raw_ >> 32) / (60 * 24) % 31 + 1); }
int TimeStamp::month() const { return static_cast<int>((raw_ >> 32) / (60 * 24 * 31) % 12 + 1); }
int TimeStamp::year() const { return static_cast<int>((raw_ >> 32) / (60 * 24 * 31 * 12) + 1900); }
double TimeStamp::second() const { return kSecondUnit * static_cast<double>(raw_ & 0xffffffffu); }

double TimeStamp::unix_time() const {
  const int64_t days =
      days_from_civil(year(), static_cast<unsigned>(month()), static_cast<unsigned>(day()));
  return static_cast<double>(days * 86400 + hour() * 3600 + minute() * 60) + second();
}

TimeStamp TimeStamp::later_than(TimeStamp other) const {
  if (raw_ > other.raw_) return *this;
  if ((other.raw_ & 0xffffffffu) != 0xffffffffu) return TimeStamp(other.raw_ + 1);
  // The low word is exhausted: move to the next minute with zero seconds, carrying
  // through hours, days and months with real month lengths, as ZODB does.
  int y = other.year(), m = other.month(), d = other.day(), h = other.hour(), mi = other.minute();
  if (++mi == 60) {
    mi = 0;
    if (++h == 24) {
      h = 0;
      if (++d > days_in_month(y, m)) {
        d = 1;
        if (++m == 13) {
          m = 1;
          ++y;
        }
      }
    }
  }
  return TimeStamp(y, m, d, h, mi, 0.0);
}

std::string TimeStamp::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%09.6f", year(), month(), day(), hour(),
                minute(), second());
  return buf;
}

Tid next_tid(double unix_now, Tid last) {
  return TimeStamp::from_unix(unix_now).later_than(TimeStamp(last)).tid();
}

}  // namespace relstore
