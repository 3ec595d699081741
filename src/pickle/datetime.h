// The datetime family's pickled payloads (CPython's datetime __reduce__ state bytes) and the
// ISO 8601 text Python's isoformat() gives for them.
#pragma once

#include <cstdint>
#include <string_view>

namespace relstore::pickle {

struct CivilTime {
  int year = 1, month = 1, day = 1;
  int hour = 0, minute = 0, second = 0, micro = 0;
};

// 10 bytes: year (2, big-endian), month, day, hour, minute, second, microsecond (3). The top
// bit of the month byte is the `fold` flag. False when the bytes are not a valid datetime.
bool parse_datetime_state(std::string_view b, CivilTime& t);
// 4 bytes: year (2), month, day.
bool parse_date_state(std::string_view b, CivilTime& t);
// 6 bytes: hour (top bit: fold), minute, second, microsecond (3).
bool parse_time_state(std::string_view b, CivilTime& t);

// Each writes at `o` and returns the end. Microseconds appear only when not zero, as in
// Python: "2024-04-09", "2024-04-09T03:39:00", "03:39:00.000250".
char* put_iso_date(char* o, const CivilTime& t);
char* put_iso_time(char* o, const CivilTime& t);
char* put_iso_datetime(char* o, const CivilTime& t);
// A UTC offset as isoformat() appends it: "+HH:MM", with ":SS" and ".ffffff" only when
// needed. False when the offset is a day or more (Python rejects it).
bool put_utc_offset(char*& o, int64_t total_micro);

}  // namespace relstore::pickle
