// compare_storages, which `convert --verify` and every conversion test rely on: each kind
// of difference between two databases must be reported, or those checks pass on
// conversions that lost data.
#include <gtest/gtest.h>

#include <algorithm>

#include "relstore/convert.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

struct Txn {
  Tid tid;
  std::string user = "u";
  std::string description = "d";
  std::string extension = "";
  std::vector<std::pair<uint64_t, std::optional<std::string>>> records;
};

Tid at(int minute) { return TimeStamp(2020, 1, 1, 0, minute, 0).tid(); }

// The same three transactions for both sides; each test changes one thing in one copy.
std::vector<Txn> base() {
  return {{at(1), "u", "d", "", {{1, std::string("one")}, {2, std::string("two")}}},
          {at(2), "u", "d", "", {{1, std::string("one, again")}}},
          {at(3), "u", "d", "", {{3, std::string("three")}}}};
}

std::unique_ptr<Storage> make(const TempDir& dir, const std::string& name, bool keep_history,
                              const std::vector<Txn>& txns) {
  auto st = open_storage("sqlite:" + dir.sub(name) + (keep_history ? "" : "?history=free"));
  auto inst = st->new_instance();
  for (const Txn& t : txns) {
    TransactionMetaData meta{t.user, t.description, t.extension};
    inst->tpc_begin(meta, t.tid);
    for (const auto& [oid, data] : t.records) inst->restore(Oid(oid), t.tid, data, meta);
    inst->tpc_vote(meta);
    inst->tpc_finish(meta);
  }
  return st;
}

// The differences reported between `a` and `b` (as source and destination), joined.
std::string differences(bool keep_history, const std::vector<Txn>& a, const std::vector<Txn>& b) {
  TempDir dir;
  auto source = make(dir, "a", keep_history, a);
  auto destination = make(dir, "b", keep_history, b);
  std::string out;
  for (const std::string& d : compare_storages(*source, *destination)) out += d + "\n";
  return out;
}

TEST(Compare, EqualHistoriesHaveNoDifference) {
  EXPECT_EQ(differences(true, base(), base()), "");
  EXPECT_EQ(differences(false, base(), base()), "");
}

TEST(Compare, AChangedStateIsReported) {
  auto b = base();
  b[1].records[0].second = std::string("one, agaiN");
  EXPECT_NE(differences(true, base(), b).find("data differs"), std::string::npos);
  EXPECT_NE(differences(false, base(), b).find("data differs"), std::string::npos);
}

TEST(Compare, ChangedMetadataIsReported) {
  auto user = base();
  user[0].user = "someone else";
  EXPECT_NE(differences(true, base(), user).find("user differs"), std::string::npos);
  auto description = base();
  description[2].description = "d ";
  EXPECT_NE(differences(true, base(), description).find("description differs"), std::string::npos);
  auto extension = base();
  extension[1].extension = std::string("}q\0.", 4);
  EXPECT_NE(differences(true, base(), extension).find("extension bytes differ"), std::string::npos);
}

TEST(Compare, AMissingOrExtraTransactionIsReported) {
  auto shorter = base();
  shorter.erase(shorter.begin() + 1);
  const std::string missing = differences(true, base(), shorter);
  EXPECT_NE(missing.find(at(2).hex() + ": missing from the destination"), std::string::npos)
      << missing;
  const std::string extra = differences(true, shorter, base());
  EXPECT_NE(extra.find(at(2).hex() + ": only in the destination"), std::string::npos) << extra;
}

TEST(Compare, AMissingRecordIsReported) {
  auto b = base();
  b[0].records.pop_back();  // object 2 never written
  EXPECT_NE(differences(true, base(), b).find("2 records in the source, 1 in the destination"),
            std::string::npos);
  EXPECT_NE(differences(false, base(), b).find(Oid(2).hex() + ": missing from the destination"),
            std::string::npos);
  EXPECT_NE(differences(false, b, base()).find(Oid(2).hex() + ": only in the destination"),
            std::string::npos);
}

TEST(Compare, ARecordOfAnotherObjectIsReported) {
  auto b = base();
  b[2].records[0].first = 4;  // the same bytes stored under another oid
  EXPECT_NE(differences(true, base(), b).find("oid " + Oid(3).hex() + " vs " + Oid(4).hex()),
            std::string::npos);
}

TEST(Compare, AnotherSerialIsReportedHistoryFree) {
  auto b = base();
  b[2].tid = at(4);  // object 3's record, same bytes, another TID
  const std::string d = differences(false, base(), b);
  EXPECT_NE(d.find("oid " + Oid(3).hex() + ": serial " + at(3).hex() + " vs " + at(4).hex()),
            std::string::npos)
      << d;
}

TEST(Compare, ADeletionIsReported) {
  auto b = base();
  b.push_back({at(5), "u", "d", "", {{3, std::nullopt}}});
  EXPECT_NE(differences(true, base(), b).find(at(5).hex() + ": only in the destination"),
            std::string::npos);
  EXPECT_NE(differences(false, base(), b).find(Oid(3).hex() + ": missing from the destination"),
            std::string::npos);
}

TEST(Compare, TheLimitBoundsTheList) {
  auto b = base();
  for (Txn& t : b) t.description = "changed";
  TempDir dir;
  auto source = make(dir, "a", true, base());
  auto destination = make(dir, "b", true, b);
  EXPECT_EQ(compare_storages(*source, *destination, 2).size(), 2u);
  EXPECT_EQ(compare_storages(*source, *destination, 20).size(), 3u);
}

// `until` (the copy's last TID) leaves out what the source committed after the copy; the
// destination is not bounded, so a transaction it has past the copy's last is reported.
TEST(Compare, UntilBoundsTheSourceOnly) {
  TempDir dir;
  auto later = base();
  later.push_back({at(4), "u", "d", "", {{4, std::string("four")}}});
  auto source = make(dir, "a", true, later);
  auto copy = make(dir, "b", true, base());
  EXPECT_EQ(compare_storages(*source, *copy, 20, nullptr, nullptr, nullptr, nullptr, at(3)),
            std::vector<std::string>{});
  auto written_into = make(dir, "c", true, later);
  const auto out =
      compare_storages(*copy, *written_into, 20, nullptr, nullptr, nullptr, nullptr, at(3));
  ASSERT_EQ(out.size(), 2u);  // the transaction, then its object as the current revisions
  EXPECT_NE(out[0].find(at(4).hex() + ": only in the destination"), std::string::npos) << out[0];
  EXPECT_NE(out[1].find(Oid(4).hex() + ": only in the destination"), std::string::npos) << out[1];
}

}  // namespace
}  // namespace relstore
