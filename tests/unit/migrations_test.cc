#include "schema/migrations.h"

#include <gtest/gtest.h>

namespace relstore {
namespace {

TEST(Migrations, SectionsSelectTheMode) {
  const char* text =
      "-- header\nCREATE TABLE a (x INT);\n-- @hp\nCREATE TABLE hp (x INT);\n"
      "-- @hf\nCREATE TABLE hf (x INT);\n-- @common\nCREATE TABLE b (\n  x INT\n);\n";
  const auto hp = migration_statements(text, true);
  ASSERT_EQ(hp.size(), 3u);
  EXPECT_NE(hp[1].find("CREATE TABLE hp"), std::string::npos);
  const auto hf = migration_statements(text, false);
  ASSERT_EQ(hf.size(), 3u);
  EXPECT_NE(hf[1].find("CREATE TABLE hf"), std::string::npos);
  EXPECT_NE(hf[2].find("CREATE TABLE b"), std::string::npos);
}

TEST(Migrations, BlocksKeepSemicolons) {
  const char* text =
      "-- @begin\nCREATE FUNCTION f() AS $$ BEGIN x; y; END $$;\n-- @end\nSELECT 1;\n";
  const auto s = migration_statements(text, true);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NE(s[0].find("y; END"), std::string::npos);
}

TEST(Migrations, SqliteBaselineIsNumberedOne) {
  const auto m = migrations_for("sqlite");
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m.front().version, 1);
  EXPECT_EQ(m.front().name, "baseline");
}

}  // namespace
}  // namespace relstore
