#include "pickle/datetime.h"

namespace relstore::pickle {
namespace {

inline uint8_t byte(std::string_view b, size_t i) { return static_cast<uint8_t>(b[i]); }

inline char* put2(char* o, int v) {
  o[0] = static_cast<char>('0' + v / 10);
  o[1] = static_cast<char>('0' + v % 10);
  return o + 2;
}

inline char* put_micro(char* o, int us) {
  *o++ = '.';
  for (int div = 100000; div > 0; div /= 10) *o++ = static_cast<char>('0' + (us / div) % 10);
  return o;
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// What Python's date() accepts: a payload it would refuse is no date (February 30th goes
// the generic instance way).
bool valid_date(const CivilTime& t) {
  return t.year >= 1 && t.year <= 9999 && t.month >= 1 && t.month <= 12 && t.day >= 1 &&
         t.day <= days_in_month(t.year, t.month);
}
bool valid_time(const CivilTime& t) {
  return t.hour <= 23 && t.minute <= 59 && t.second <= 59 && t.micro <= 999999;
}

}  // namespace

bool parse_datetime_state(std::string_view b, CivilTime& t) {
  if (b.size() != 10) return false;
  t.year = byte(b, 0) * 256 + byte(b, 1);
  t.month = byte(b, 2) & 0x7F;
  t.day = byte(b, 3);
  t.hour = byte(b, 4);
  t.minute = byte(b, 5);
  t.second = byte(b, 6);
  t.micro = (byte(b, 7) << 16) | (byte(b, 8) << 8) | byte(b, 9);
  return valid_date(t) && valid_time(t);
}

bool parse_date_state(std::string_view b, CivilTime& t) {
  if (b.size() != 4) return false;
  t.year = byte(b, 0) * 256 + byte(b, 1);
  t.month = byte(b, 2);
  t.day = byte(b, 3);
  return valid_date(t);
}

bool parse_time_state(std::string_view b, CivilTime& t) {
  if (b.size() != 6) return false;
  t.hour = byte(b, 0) & 0x7F;
  t.minute = byte(b, 1);
  t.second = byte(b, 2);
  t.micro = (byte(b, 3) << 16) | (byte(b, 4) << 8) | byte(b, 5);
  return valid_time(t);
}

char* put_iso_date(char* o, const CivilTime& t) {
  o = put2(o, t.year / 100);
  o = put2(o, t.year % 100);
  *o++ = '-';
  o = put2(o, t.month);
  *o++ = '-';
  return put2(o, t.day);
}

char* put_iso_time(char* o, const CivilTime& t) {
  o = put2(o, t.hour);
  *o++ = ':';
  o = put2(o, t.minute);
  *o++ = ':';
  o = put2(o, t.second);
  return t.micro ? put_micro(o, t.micro) : o;
}

char* put_iso_datetime(char* o, const CivilTime& t) {
  o = put_iso_date(o, t);
  *o++ = 'T';
  return put_iso_time(o, t);
}

bool put_utc_offset(char*& o, int64_t total_micro) {
  constexpr int64_t kDay = int64_t{86400} * 1000000;
  if (total_micro <= -kDay || total_micro >= kDay) return false;
  *o++ = total_micro < 0 ? '-' : '+';
  const int64_t a = total_micro < 0 ? -total_micro : total_micro;
  const int64_t secs = a / 1000000;
  const int us = static_cast<int>(a % 1000000);
  o = put2(o, static_cast<int>(secs / 3600));
  *o++ = ':';
  o = put2(o, static_cast<int>(secs % 3600 / 60));
  if (secs % 60 || us) {
    *o++ = ':';
    o = put2(o, static_cast<int>(secs % 60));
  }
  if (us) o = put_micro(o, us);
  return true;
}

}  // namespace relstore::pickle
