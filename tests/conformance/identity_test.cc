// Identity: conformance.md line 40.
#include "conformance/fixture.h"

namespace relstore::conformance {
namespace {

using Identity = StorageTest;

TEST_P(Identity, SortKeyNameAndSizeAreStableAndPrintable) {
  const std::string name = storage_->name();
  const std::string key = storage_->sort_key();
  EXPECT_FALSE(name.empty());
  EXPECT_FALSE(key.empty());
  for (char c : name + key) EXPECT_TRUE(std::isprint(static_cast<unsigned char>(c))) << name;
  create(1, "12345");
  EXPECT_EQ(storage_->name(), name);
  EXPECT_EQ(storage_->sort_key(), key);
  EXPECT_EQ(reopen()->sort_key(), key);
  EXPECT_GE(storage_->size(), 5u);
}

TEST_P(Identity, NamesNeverShowAPassword) {
  // user:password@ in the URI (the server backends' test URIs have one).
  const auto scheme_end = uri_.find("://");
  const auto at = uri_.find('@');
  const auto colon =
      scheme_end == std::string::npos ? std::string::npos : uri_.find(':', scheme_end + 3);
  if (at == std::string::npos || colon == std::string::npos || colon > at) {
    GTEST_SKIP() << "this backend's URI has no password";
  }
  // As written in the URI (the test password may also be part of the database's name).
  const std::string credentials = uri_.substr(colon, at - colon + 1);
  ASSERT_GT(credentials.size(), 2u);
  for (const std::string& shown : {storage_->name(), storage_->sort_key(), storage_->identity()}) {
    EXPECT_EQ(shown.find(credentials), std::string::npos) << shown;
  }
}

TEST_P(Identity, LenIsExact) {
  EXPECT_EQ(storage_->len(), 0u);
  commit(*inst_, {{1, "a"}, {2, "b"}, {3, "c"}});
  const Tid t = inst_->load(Oid(1)).tid;
  commit(*inst_, {{1, "a2"}}, {{1, t}});
  EXPECT_EQ(storage_->len(), 3u);
}

TEST_P(Identity, RecordIterNextWalksCurrentRecordsInOidOrder) {
  EXPECT_FALSE(inst_->record_iternext(std::nullopt));
  const Tid t1 = commit(*inst_, {{7, "seven"}, {3, "three"}, {11, "eleven"}});
  const Tid t2 = commit(*inst_, {{3, "three v2"}}, {{3, t1}});
  inst_->poll_invalidations();
  std::vector<std::pair<Oid, std::string>> seen;
  std::optional<Oid> next;
  do {
    auto r = inst_->record_iternext(next);
    ASSERT_TRUE(r);
    seen.emplace_back(r->oid, r->data);
    if (r->oid == Oid(3)) {
      EXPECT_EQ(r->tid, t2);
    }
    next = r->next;
  } while (next);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], std::make_pair(Oid(3), std::string("three v2")));
  EXPECT_EQ(seen[1], std::make_pair(Oid(7), std::string("seven")));
  EXPECT_EQ(seen[2], std::make_pair(Oid(11), std::string("eleven")));
}

// OIDs are unsigned 64-bit; SQL keeps them in signed BIGINTs, where those of 2**63 and
// above are negative and sort first. The walk is still in OID order and misses none.
TEST_P(Identity, RecordIterNextReachesOidsPastTwoToTheSixtyThird) {
  constexpr uint64_t kHigh = uint64_t{1} << 63;
  commit(*inst_, {{kHigh + 5, "high"}, {9, "low"}, {~uint64_t{0} - 1, "highest"}, {kHigh, "mid"}});
  inst_->poll_invalidations();
  std::vector<Oid> seen;
  std::optional<Oid> next;
  do {
    auto r = inst_->record_iternext(next);
    ASSERT_TRUE(r);
    seen.push_back(r->oid);
    next = r->next;
  } while (next && seen.size() < 10);
  EXPECT_EQ(seen, (std::vector<Oid>{Oid(9), Oid(kHigh), Oid(kHigh + 5), Oid(~uint64_t{0} - 1)}));
  auto from_high = inst_->record_iternext(Oid(kHigh + 1));
  ASSERT_TRUE(from_high);
  EXPECT_EQ(from_high->oid, Oid(kHigh + 5));
}

RELSTORE_CONFORMANCE_SUITE(Identity);

}  // namespace
}  // namespace relstore::conformance
