// relstore's server-side TID functions agree with the C++ TimeStamp (design.md §5), so a
// TID chosen on the server is the one ZODB would have chosen at that instant.
#include <cstdio>
#include <random>

#include "postgresql/pg_support.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"

namespace relstore {
namespace {

using pgtest::TestDatabase;

class TidFunctions : public ::testing::Test {
 protected:
  void SetUp() override {
    RELSTORE_NEED_POSTGRESQL();
    // One database per test: ctest runs the tests of this fixture in parallel.
    db_ = std::make_unique<TestDatabase>(
        std::string("tid_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    open_storage(db_->uri())->close();  // installs the functions
  }
  uint64_t server_tid(const std::string& expression) {
    return static_cast<uint64_t>(std::stoll(db_->scalar("SELECT " + expression)));
  }
  std::unique_ptr<TestDatabase> db_;
};

std::string epoch_literal(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", t);
  return std::string("relstore_tid_for_epoch(") + buf + "::double precision)";
}

TEST_F(TidFunctions, KnownVector) {
  // 2021-05-03 16:23:49.888861 UTC.
  EXPECT_EQ(server_tid(epoch_literal(1620059029.888861)), 0x03dfd117d4dbf099ULL);
}

TEST_F(TidFunctions, AgreeWithTimeStampFromUnix) {
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> when(0.0, 4102444800.0);  // 1970 … 2100
  std::vector<double> times = {0.0,
                               59.999999,
                               60.0,
                               951782399.5,
                               951782400.25,
                               1620059029.888861,
                               1709251199.9999995,
                               4102444799.999};
  for (int i = 0; i < 200; ++i) times.push_back(when(rng));
  std::string list;
  for (double t : times) list += (list.empty() ? "" : ", ") + epoch_literal(t) + "::text";
  // All in one query: one row of comma-separated TIDs.
  const std::string got = db_->scalar("SELECT array_to_string(ARRAY[" + list + "], ',')");
  size_t pos = 0;
  for (double t : times) {
    const size_t comma = got.find(',', pos);
    const uint64_t server = std::stoull(got.substr(pos, comma - pos));
    EXPECT_EQ(server, TimeStamp::from_unix(t).raw())
        << "at " << std::to_string(t) << ": server " << TimeStamp(server).str() << ", client "
        << TimeStamp::from_unix(t).str();
    pos = comma + 1;
  }
}

TEST_F(TidFunctions, LaterThanAgreesWithTimeStampLaterThan) {
  const uint64_t full = 0xffffffffULL;
  const std::vector<std::pair<uint64_t, uint64_t>> cases = {
      {0x03dfd117d4dbf099ULL, 0x03dfd117d4dbf098ULL},        // newer: kept
      {0x03dfd117d4dbf099ULL, 0x03dfd117d4dbf099ULL},        // equal: last + 1
      {0x0300000000000000ULL, 0x03dfd117d4dbf099ULL},        // clock behind: last + 1
      {0, TimeStamp(2021, 4, 30, 23, 59, 0).raw() | full},   // to May 1
      {0, TimeStamp(2020, 2, 29, 23, 59, 0).raw() | full},   // leap day to March 1
      {0, TimeStamp(2021, 12, 31, 23, 59, 0).raw() | full},  // to the next year
      {0, TimeStamp(2021, 5, 3, 16, 23, 0).raw() | full},    // to the next minute
  };
  for (const auto& [now, last] : cases) {
    const uint64_t server = server_tid("relstore_later_than(" + std::to_string(now) + ", " +
                                       std::to_string(last) + ")");
    const uint64_t client = TimeStamp(now).later_than(TimeStamp(last)).raw();
    EXPECT_EQ(server, client) << TimeStamp(last).str() << " -> server " << TimeStamp(server).str()
                              << ", client " << TimeStamp(client).str();
  }
}

}  // namespace
}  // namespace relstore
