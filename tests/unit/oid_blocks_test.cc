#include "backend/oid_blocks.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace relstore::backend {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::vector<Oid> block(int64_t b) {
  std::vector<Oid> out;
  append_oid_block(b, out, "test");
  return out;
}

TEST(OidBlocks, BlockOneHoldsOneToSixteen) {
  const auto oids = block(1);
  ASSERT_EQ(oids.size(), 16u);
  EXPECT_EQ(oids.front().value(), 1u);
  EXPECT_EQ(oids.back().value(), 16u);
}

TEST(OidBlocks, TheBlockOfAnOidHoldsIt) {
  for (uint64_t oid : {uint64_t{1}, uint64_t{16}, uint64_t{17}, kMax - 16, kMax - 15, kMax}) {
    const uint64_t b = oid_block_of(oid);
    const auto oids = block(static_cast<int64_t>(b));
    EXPECT_LE(oids.front().value(), oid) << oid;
    EXPECT_GE(oids.back().value(), oid) << oid;
  }
}

TEST(OidBlocks, TheLastBlockEndsAtTheLargestOidAndNeverWrapsToZero) {
  const auto oids = block(static_cast<int64_t>(kLastOidBlock));
  ASSERT_EQ(oids.size(), 15u);
  EXPECT_EQ(oids.front().value(), kMax - 14);
  EXPECT_EQ(oids.back().value(), kMax);
  for (const Oid& oid : oids) EXPECT_NE(oid.value(), 0u);
}

TEST(OidBlocks, PastTheLastBlockIsAnError) {
  try {
    block(static_cast<int64_t>(kLastOidBlock + 1));
    FAIL() << "no error";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("test: no OIDs left"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relstore::backend
