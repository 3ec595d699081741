// Runs the examples of docs/json-mirror.md against a sample database of their dialect with
// the mirror on, so the documentation cannot drift from what works.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "json_mirror_support.h"
#include "relstore/json_mirror.h"
#include "relstore/sample.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

// Blocks of docs/json-mirror.md whose first line is "-- <dialect>: <name>".
std::map<std::string, std::string> examples(const std::string& dialect) {
  std::ifstream in(std::string(RELSTORE_SOURCE_DIR) + "/docs/json-mirror.md");
  std::map<std::string, std::string> out;
  std::string line, name, body;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (!in_block && line == "```sql") {
      in_block = true;
      name.clear();
      body.clear();
      continue;
    }
    if (in_block && line == "```") {
      in_block = false;
      if (!name.empty()) out[name] = body;
      continue;
    }
    if (!in_block) continue;
    const std::string tag = "-- " + dialect + ": ";
    if (body.empty() && line.rfind(tag, 0) == 0) {
      name = line.substr(tag.size());
      continue;
    }
    body += line + "\n";
  }
  return out;
}

// Runs every example of `dialect` against `uri` (a sample of 2000 objects with the mirror
// on) and checks that each finds what its text says.
void check_examples(const std::string& dialect, const std::string& uri,
                    const std::vector<std::string>& expected) {
  const auto ex = examples(dialect);
  for (const auto& name : expected) {
    EXPECT_TRUE(ex.count(name)) << "docs/json-mirror.md lacks the " << dialect << " example "
                                << name;
  }
  for (const auto& [name, sql] : ex) {
    SCOPED_TRACE(dialect + ": " + name);
    mirror_test::Rows rows;
    try {
      rows = mirror_test::query(uri, sql);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << "\n" << sql;
      continue;
    }
    if (name == "errors") {
      EXPECT_TRUE(rows.empty());
    } else {
      EXPECT_FALSE(rows.empty()) << sql;
    }
    if (name == "count-by-class" && !rows.empty()) {
      EXPECT_EQ(rows[0][0], "myapp.content.Document");
    }
    if (name.rfind("referenced-by", 0) == 0) {
      bool from_section = false;
      for (const auto& r : rows) from_section = from_section || r[0] == "1";
      EXPECT_TRUE(from_section) << "the section (oid 1) holds folder 2";
    }
    if (name == "parents") {
      ASSERT_GE(rows.size(), 2u);
      EXPECT_EQ(rows[0][0], "3");
      EXPECT_EQ(rows[1][0], "2");
    }
    if (name == "tag-contains") {
      for (const auto& r : rows) EXPECT_NE(r[1], "NULL") << "a document without a title";
    }
  }
}

std::string sample_with_mirror(const mirror_test::Backend& b, const testing::TempDir& d) {
  const std::string uri = mirror_test::empty_database(b, d, "docs");
  SampleOptions o;
  o.objects = 2000;
  write_sample(uri, o);
  mirror_enable(uri, MirrorMode::in_commit);
  return uri;
}

TEST(JsonMirrorDocs, EverySqliteExampleRunsAndFindsWhatItSays) {
  testing::TempDir d;
  const std::string uri = sample_with_mirror({Scheme::sqlite, false}, d);
  check_examples("sqlite", uri,
                 {"find-by-attribute", "count-by-class", "tag-contains", "referenced-by", "parents",
                  "newt-view", "errors"});
}

// The server examples exist in builds with their backend (not the sanitizer builds).
#ifdef RELSTORE_HAVE_POSTGRESQL
TEST(JsonMirrorDocs, EveryPostgresqlExampleRunsAndFindsWhatItSays) {
  const mirror_test::Backend pg{Scheme::postgresql, false};
  RELSTORE_NEED_BACKEND(pg);
  testing::TempDir d;
  const std::string uri = sample_with_mirror(pg, d);
  check_examples("postgresql", uri,
                 {"find-by-attribute", "count-by-class", "tag-contains", "referenced-by",
                  "referenced-by-any", "parents", "newt-view", "errors"});
}
#endif

#ifdef RELSTORE_HAVE_MYSQL
TEST(JsonMirrorDocs, EveryMysqlExampleRunsAndFindsWhatItSays) {
  const mirror_test::Backend my{Scheme::mysql, false};
  RELSTORE_NEED_BACKEND(my);
  testing::TempDir d;
  const std::string uri = sample_with_mirror(my, d);
  check_examples("mysql", uri,
                 {"find-by-attribute", "count-by-class", "tag-contains", "tag-counts",
                  "referenced-by", "parents", "newt-view", "errors"});
}
#endif

}  // namespace
}  // namespace relstore
