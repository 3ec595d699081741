// Runs the SQLite examples of docs/json-mirror.md against a sample database with the
// mirror on, so the documentation cannot drift from what works.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <map>
#include <sstream>

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

using Rows = std::vector<std::vector<std::string>>;

Rows query(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  Rows out;
  while (s && sqlite3_step(s) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      const auto* t = sqlite3_column_text(s, c);
      row.emplace_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    out.push_back(row);
  }
  sqlite3_finalize(s);
  return out;
}

TEST(JsonMirrorDocs, EverySqliteExampleRunsAndFindsWhatItSays) {
  testing::TempDir d;
  const std::string uri = "sqlite://" + d.sub("db");
  SampleOptions o;
  o.objects = 2000;
  write_sample(uri, o);
  mirror_enable(uri, MirrorMode::in_commit);

  const auto ex = examples("sqlite");
  for (const char* name : {"find-by-attribute", "count-by-class", "tag-contains", "referenced-by",
                           "parents", "newt-view", "errors"}) {
    EXPECT_TRUE(ex.count(name)) << "docs/json-mirror.md lacks the sqlite example " << name;
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(d.sub("db/main.sqlite3").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  for (const auto& [name, sql] : ex) {
    SCOPED_TRACE(name);
    const Rows rows = query(db, sql);
    if (name == "errors") {
      EXPECT_TRUE(rows.empty());
    } else {
      EXPECT_FALSE(rows.empty()) << sql;
    }
    if (name == "count-by-class" && !rows.empty()) {
      EXPECT_EQ(rows[0][0], "myapp.content.Document");
    }
    if (name == "referenced-by") {
      bool from_section = false;
      for (const auto& r : rows) from_section = from_section || r[0] == "1";
      EXPECT_TRUE(from_section) << "the section (oid 1) holds folder 2";
    }
    if (name == "parents") {
      ASSERT_GE(rows.size(), 2u);
      EXPECT_EQ(rows[0][0], "3");
      EXPECT_EQ(rows[1][0], "2");
    }
  }
  sqlite3_close(db);
}

}  // namespace
}  // namespace relstore
