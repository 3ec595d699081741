// `relstore verify`'s checks of what a database keeps beside the objects (design.md §8):
// current_object against object_state (history-preserving) and the JSON mirror, on every
// backend the mirror tests run on. The reference checks are tests/tools/cli_test.cc's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "json_mirror_support.h"
#include "relstore/json_mirror.h"
#include "relstore/ops.h"
#include "relstore/storage.h"
#include "support/commits.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using mirror_test::Backend;

class Verify : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    RELSTORE_NEED_BACKEND(GetParam());
    uri_ = mirror_test::sample_database(GetParam(), d_, 60, 5);
  }

  bool hp() const { return GetParam().keep_history; }

  // Commits the object's own state again: a second revision.
  Tid rewrite(Oid oid) {
    auto st = open_storage(uri_);
    auto inst = st->new_instance();
    const LoadResult now = inst->load(oid);
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(oid, now.tid, now.data, txn);
    inst->tpc_vote(txn);
    return inst->tpc_finish(txn);
  }

  static bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  testing::TempDir d_;
  std::string uri_;
};

// A history-free database has no current_object table: these run on the others.
using VerifyHp = Verify;

std::vector<Backend> history_preserving() {
  std::vector<Backend> out;
  for (const Backend& b : mirror_test::backends()) {
    if (b.keep_history) out.push_back(b);
  }
  return out;
}

TEST_P(Verify, AWholeDatabasePasses) {
  const VerifyReport r = verify_storage(uri_);
  EXPECT_TRUE(r.ok()) << format_verify_report(r, false);
  EXPECT_EQ(r.current_checked, hp());
  EXPECT_EQ(r.current_faults, 0u);
  ASSERT_TRUE(r.mirror.has_value()) << r.mirror_unchecked;
  EXPECT_EQ(r.mirror->mode, MirrorMode::off);
  const std::string text = format_verify_report(r, false);
  EXPECT_EQ(has(text, "current_object names every object's newest revision"), hp()) << text;
  EXPECT_TRUE(has(text, "JSON mirror off\n")) << text;
}

// A current_object row that is missing, or names an older revision than the newest (the
// foreign key of RelStorage's PostgreSQL and MySQL schemas rules out one naming no
// revision; SQLite's schema has no such key).
TEST_P(VerifyHp, FindsCurrentObjectRowsOutOfStepWithObjectState) {
  const Tid first = open_storage(uri_)->new_instance()->load(Oid(9)).tid;
  rewrite(Oid(9));
  mirror_test::query(
      uri_, "UPDATE current_object SET tid = " + std::to_string(first.sql()) + " WHERE zoid = 9");
  mirror_test::query(uri_, "DELETE FROM current_object WHERE zoid = 7");
  uint64_t expected = 2;
  if (GetParam().scheme == Scheme::sqlite) {
    mirror_test::query(uri_, "UPDATE current_object SET tid = tid + 1 WHERE zoid = 3");
    expected = 3;
  }
  const VerifyReport r = verify_storage(uri_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.current_faults, expected);
  std::vector<Oid> oids = {Oid(7), Oid(9)};
  if (expected == 3) oids.insert(oids.begin(), Oid(3));
  EXPECT_EQ(r.current_fault_oids, oids);
  const std::string text = format_verify_report(r, false);
  EXPECT_TRUE(has(text, "ERROR: " + std::to_string(expected) +
                            " objects whose current_object row does not name their newest "
                            "revision in object_state"))
      << text;
  EXPECT_TRUE(has(text, Oid(9).hex())) << text;
  EXPECT_TRUE(has(text, "\nFAILED\n")) << text;
  const auto j = nlohmann::json::parse(format_verify_report(r, true));
  EXPECT_EQ(j["current_faults"], expected);
  EXPECT_EQ(j["current_fault_oids"].back(), Oid(9).hex());
  EXPECT_FALSE(j["ok"].get<bool>());
}

// An in-commit mirror must equal the data; a row left behind by another writer's deletion
// fails verify until `follow --once` repairs it. A follow-mode mirror may trail: its lag
// is reported, not judged.
TEST_P(Verify, JudgesAnInCommitMirrorAndReportsAFollowersLag) {
  mirror_enable(uri_, MirrorMode::in_commit);
  VerifyReport r = verify_storage(uri_);
  EXPECT_TRUE(r.ok()) << format_verify_report(r, false);
  ASSERT_TRUE(r.mirror.has_value()) << r.mirror_unchecked;
  EXPECT_EQ(r.mirror->mode, MirrorMode::in_commit);
  EXPECT_TRUE(has(format_verify_report(r, false), "JSON mirror in-commit: "))
      << format_verify_report(r, false);

  // An object of no one's: removing it leaves the graph whole.
  {
    auto st = open_storage(uri_);
    auto inst = st->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(1000), std::nullopt, testing::mapping_of({}), txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  if (hp()) {
    mirror_test::query(uri_, "DELETE FROM current_object WHERE zoid = 1000");
    mirror_test::query(uri_, "DELETE FROM object_state WHERE zoid = 1000");
  } else {
    mirror_test::query(uri_, "DELETE FROM object_state WHERE zoid = 1000");
  }
  r = verify_storage(uri_);
  EXPECT_TRUE(r.mirror_behind());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.current_faults, 0u);
  EXPECT_TRUE(has(format_verify_report(r, false), "ERROR: the in-commit JSON mirror differs"))
      << format_verify_report(r, false);

  FollowOptions once;
  once.once = true;
  mirror_follow(uri_, once);
  r = verify_storage(uri_);
  EXPECT_TRUE(r.ok()) << format_verify_report(r, false);

  mirror_enable(uri_, MirrorMode::follow);
  rewrite(Oid(3));
  r = verify_storage(uri_);
  EXPECT_TRUE(r.ok()) << format_verify_report(r, false);
  ASSERT_TRUE(r.mirror.has_value());
  EXPECT_EQ(r.mirror->pending, 1u);
  const std::string text = format_verify_report(r, false);
  EXPECT_TRUE(has(text, "JSON mirror follow: ")) << text;
  EXPECT_TRUE(has(text, ", lag ")) << text;
}

INSTANTIATE_TEST_SUITE_P(Backends, Verify, ::testing::ValuesIn(mirror_test::backends()),
                         [](const auto& p) { return mirror_test::backend_name(p.param); });
INSTANTIATE_TEST_SUITE_P(Backends, VerifyHp, ::testing::ValuesIn(history_preserving()),
                         [](const auto& p) { return mirror_test::backend_name(p.param); });

}  // namespace
}  // namespace relstore
