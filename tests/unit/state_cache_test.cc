#include "storage/state_cache.h"

#include <gtest/gtest.h>

namespace relstore {
namespace {

TEST(StateCache, HitsByOidAndTid) {
  StateCache c(1 << 20);
  c.put(Oid(1), Tid(10), "abc");
  EXPECT_EQ(c.get(Oid(1), Tid(10)), "abc");
  EXPECT_FALSE(c.get(Oid(1), Tid(11)));
  EXPECT_FALSE(c.get(Oid(2), Tid(10)));
}

TEST(StateCache, EvictsLeastRecentlyUsedWithinBudget) {
  StateCache c(4096);
  const std::string big(600, 'x');
  for (uint64_t i = 0; i < 20; ++i) c.put(Oid(i), Tid(1), big);
  EXPECT_LE(c.bytes(), 4096u);
  EXPECT_TRUE(c.get(Oid(19), Tid(1)));
  EXPECT_FALSE(c.get(Oid(0), Tid(1)));
}

TEST(StateCache, ZeroBudgetCachesNothing) {
  StateCache c(0);
  c.put(Oid(1), Tid(1), "x");
  EXPECT_FALSE(c.get(Oid(1), Tid(1)));
}

}  // namespace
}  // namespace relstore
