#include "relstore/timestamp.h"

#include <gtest/gtest.h>

namespace relstore {
namespace {

// The vector from design.md §5.
TEST(TimeStamp, KnownVector) {
  const TimeStamp ts(0x03dfd117d4dbf099ULL);
  EXPECT_EQ(ts.year(), 2021);
  EXPECT_EQ(ts.month(), 5);
  EXPECT_EQ(ts.day(), 3);
  EXPECT_EQ(ts.hour(), 16);
  EXPECT_EQ(ts.minute(), 23);
  EXPECT_EQ(ts.str(), "2021-05-03 16:23:49.888861");
}

TEST(TimeStamp, FromDateMatchesZodb) {
  // TimeStamp(2021, 5, 3, 16, 23, 49.888861) in ZODB gives this raw value; the low word is
  // trunc(seconds * 2**32 / 60).
  const TimeStamp ts(2021, 5, 3, 16, 23, 49.888861);
  EXPECT_EQ(ts.raw() >> 32, 0x03dfd117ULL);
  EXPECT_NEAR(static_cast<double>(ts.raw() & 0xffffffffu), 0xd4dbf099,
              72.0);  // within one microsecond
  EXPECT_EQ(ts.str(), "2021-05-03 16:23:49.888861");
}

TEST(TimeStamp, FromUnixUsesUtc) {
  // 2021-05-03T16:23:49.888861Z
  const TimeStamp ts = TimeStamp::from_unix(1620059029.888861);
  EXPECT_EQ(ts.str(), "2021-05-03 16:23:49.888861");
  EXPECT_NEAR(ts.unix_time(), 1620059029.888861, 1e-5);
}

TEST(TimeStamp, LaterThanKeepsALaterStamp) {
  const TimeStamp early(0x03dfd117d4dbf099ULL);
  const TimeStamp late(0x03dfd11800000000ULL);
  EXPECT_EQ(late.later_than(early).raw(), late.raw());
}

TEST(TimeStamp, LaterThanIncrementsWhenNotLater) {
  const TimeStamp last(0x03dfd117d4dbf099ULL);
  const TimeStamp now(0x03dfd10000000000ULL);  // the clock is behind
  EXPECT_EQ(now.later_than(last).raw(), last.raw() + 1);
  EXPECT_EQ(last.later_than(last).raw(), last.raw() + 1);
}

TEST(TimeStamp, LaterThanCarriesIntoTheNextMinuteAndMonth) {
  // 2021-04-30 23:59 with the low word exhausted rolls to 2021-05-01 00:00:00.
  const TimeStamp last(TimeStamp(2021, 4, 30, 23, 59, 0).raw() | 0xffffffffULL);
  const TimeStamp next = TimeStamp(0).later_than(last);
  EXPECT_EQ(next.str(), "2021-05-01 00:00:00.000000");
  // Year end.
  const TimeStamp eoy(TimeStamp(2021, 12, 31, 23, 59, 0).raw() | 0xffffffffULL);
  EXPECT_EQ(TimeStamp(0).later_than(eoy).str(), "2022-01-01 00:00:00.000000");
  // Leap day.
  const TimeStamp leap(TimeStamp(2024, 2, 28, 23, 59, 0).raw() | 0xffffffffULL);
  EXPECT_EQ(TimeStamp(0).later_than(leap).str(), "2024-02-29 00:00:00.000000");
}

TEST(TimeStamp, NextTidIsStrictlyIncreasing) {
  const Tid last(0x03dfd117d4dbf099ULL);
  EXPECT_GT(next_tid(1620059029.0, last), last);  // clock behind the last TID
  EXPECT_GT(next_tid(1700000000.0, last), last);  // clock ahead
  EXPECT_EQ(next_tid(1620059029.0, last), Tid(last.value() + 1));
}

}  // namespace
}  // namespace relstore
