// TIDs chosen on the server: relstore_make_tid against the C++ TimeStamp (design.md §5).
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <tuple>

#include "mysql/support.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"

namespace relstore::mysql::testing {
namespace {

class MysqlTid : public MysqlServerTest {
 protected:
  void SetUp() override {
    MysqlServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::string uri = fresh_database("tid", "?history=free");
    open_storage(uri)->close();
    conn_ = connect(StorageUri::parse(uri).database);
  }

  // relstore_make_tid for a UTC time 'YYYY-MM-DD HH:MM:SS.ffffff' and a last TID.
  Tid make_tid(const std::string& when, Tid last = Tid(0)) {
    int64_t out = 0;
    conn_->batch(
        "CALL relstore_make_tid('" + when + "', " + std::to_string(last.sql()) +
            ", @tid); SELECT @tid",
        2,
        [&](Rows& r) {
          if (r.next()) out = r.int64(0);
        },
        Context::other);
    return Tid::from_sql(out);
  }

  std::unique_ptr<Connection> conn_;
};

TEST_F(MysqlTid, KnownVector) {
  // 0x03dfd117d4dbf099 prints as 2021-05-03 16:23:49.888861; the server's clock has whole
  // microseconds, so it lands on the same printed time, less than a microsecond (72 units
  // of 60/2**32 s) from the vector.
  const Tid tid = make_tid("2021-05-03 16:23:49.888861");
  EXPECT_EQ(TimeStamp(tid).str(), "2021-05-03 16:23:49.888861");
  EXPECT_EQ(tid.value() >> 32, 0x03dfd117ULL);
  EXPECT_LT(tid.value() > 0x03dfd117d4dbf099ULL ? tid.value() - 0x03dfd117d4dbf099ULL
                                                : 0x03dfd117d4dbf099ULL - tid.value(),
            72u);
}

TEST_F(MysqlTid, MatchesTimeStampThroughoutAMinute) {
  for (const char* sec : {"00.000000", "00.000001", "29.999999", "30.000000", "59.400000",
                          "59.499999", "59.500000", "59.500001", "59.750000", "59.999999"}) {
    const Tid tid = make_tid(std::string("2024-02-29 23:59:") + sec);
    const TimeStamp expected(2024, 2, 29, 23, 59, std::stod(sec));
    EXPECT_EQ(tid.value(), expected.raw()) << sec;
    // The rounding guard: the last half second stays in its minute.
    EXPECT_EQ(TimeStamp(tid).minute(), 59) << sec;
    EXPECT_EQ(TimeStamp(tid).day(), 29) << sec;
  }
}

TEST_F(MysqlTid, ALastTidAheadOfTheClockGivesLastPlusOne) {
  const Tid future = TimeStamp(2999, 1, 1, 0, 0, 0).tid();
  EXPECT_EQ(make_tid("2024-01-01 00:00:00.000000", future), Tid(future.value() + 1));
  const Tid now = make_tid("2024-01-01 00:00:00.000000");
  EXPECT_EQ(make_tid("2024-01-01 00:00:00.000000", now), Tid(now.value() + 1));
}

TEST_F(MysqlTid, AnExhaustedLowWordMovesToTheNextMinuteWithRealMonthLengths) {
  const std::tuple<int, int, int> days[] = {
      {2021, 4, 30}, {2024, 2, 29}, {2023, 2, 28}, {2023, 12, 31}};
  for (const auto& [y, m, d] : days) {
    const TimeStamp last((TimeStamp(y, m, d, 23, 59, 0).raw() & ~0xffffffffULL) | 0xffffffffULL);
    const Tid expected = TimeStamp(0).later_than(last).tid();
    EXPECT_EQ(make_tid("2000-01-01 00:00:00.000000", last.tid()), expected)
        << y << "-" << m << "-" << d;
    EXPECT_EQ(TimeStamp(expected).hour(), 0);
    EXPECT_EQ(TimeStamp(expected).day(), 1);
  }
}

TEST_F(MysqlTid, CommitsTakeTheServersUtcClock) {
  // The session time zone is +00:00 and the procedure reads UTC_TIMESTAMP: a commit's TID
  // is the current UTC time whatever the server's zone (same machine in this test).
  const std::string uri = fresh_database("tid_clock", "?history=preserving");
  auto st = open_storage(uri);
  const Tid tid = commit_one(*st->new_instance(), Oid(1), std::nullopt, "x");
  EXPECT_NEAR(TimeStamp(tid).unix_time(), static_cast<double>(std::time(nullptr)), 5.0);
}

}  // namespace
}  // namespace relstore::mysql::testing
