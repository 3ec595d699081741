#include "schema/server_code.h"

#include <gtest/gtest.h>

#include "relstore/errors.h"

namespace relstore {
namespace {

// The generation names the text of sql/: a change without a new generation would let
// processes of the two texts replace each other's code (src/schema/server_code.h).
TEST(ServerCode, TheGenerationRecordsTheTextOfSqlFiles) {
  EXPECT_EQ(server_code_digest(), kServerCodeDigest)
      << "the files under sql/ changed: increase kServerCodeGeneration (now "
      << kServerCodeGeneration << ") and set kServerCodeDigest to \"" << server_code_digest()
      << "\" in src/schema/server_code.h";
}

TEST(ServerCode, CommentsNameTheirGeneration) {
  const std::string ours = server_code_comment("0123abcd");
  EXPECT_EQ(ours, "relstore g" + std::to_string(kServerCodeGeneration) + " md5 0123abcd");
  EXPECT_EQ(server_code_generation(ours), kServerCodeGeneration);
  EXPECT_EQ(server_code_generation("relstore g42 md5 ff"), 42);
  // Before generations: PostgreSQL's and MySQL's comments, and anything else.
  EXPECT_EQ(server_code_generation("relstore md5 0123abcd"), 0);
  EXPECT_EQ(server_code_generation("relstore 0123abcd"), 0);
  EXPECT_EQ(server_code_generation("relstore g7"), 0);
  EXPECT_EQ(server_code_generation("relstore gx md5 1"), 0);
  EXPECT_EQ(server_code_generation(""), 0);
}

TEST(ServerCode, OnlyANewerGenerationIsRefused) {
  EXPECT_NO_THROW(check_server_code_not_newer("relstore_finish", "relstore md5 1", "db"));
  EXPECT_NO_THROW(check_server_code_not_newer("relstore_finish", server_code_comment("1"), "db"));
  const std::string newer = "relstore g" + std::to_string(kServerCodeGeneration + 1) + " md5 1";
  try {
    check_server_code_not_newer("relstore_finish", newer, "postgresql://h/db");
    FAIL() << "accepted code of a newer generation";
  } catch (const SchemaError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("postgresql://h/db"), std::string::npos) << msg;
    EXPECT_NE(msg.find("relstore_finish"), std::string::npos) << msg;
    EXPECT_NE(msg.find("newer relstore"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace relstore
