// `relstore json-mirror bench`: the command parses its arguments and prints what
// bench_decode measured, as a table or as JSON with the documented keys.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "relstore/pickle.h"
#include "support/corpus.h"

namespace relstore {
namespace {

// Runs `relstore ARGS…` with only the json-mirror command registered; returns stdout.
std::string run(std::vector<std::string> args) {
  CLI::App app{"relstore"};
  app.require_subcommand(1);
  cli::add_json_mirror_command(app);
  std::vector<const char*> argv{"relstore"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  ::testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return ::testing::internal::GetCapturedStdout();
}

TEST(JsonMirrorCommand, BenchJsonOnTheCorpus) {
  RELSTORE_CODEC_CORPUS(path);
  const nlohmann::json j =
      nlohmann::json::parse(run({"json-mirror", "bench", path, "--json", "--passes", "1"}));
  EXPECT_EQ(j["records"], 1692);
  EXPECT_EQ(j["errors"], 0);
  for (const char* key : {"mean_us", "p50_us", "p95_us", "mb_per_s"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GT(j[key].get<double>(), 0) << key;
  }
}

TEST(JsonMirrorCommand, BenchTableOnTheCorpus) {
  RELSTORE_CODEC_CORPUS(path);
  const std::string out = run({"json-mirror", "bench", path, "--passes", "1"});
  for (const char* word : {"records      1692", "errors       0", "mean", "p50", "p95", "MB/s"}) {
    EXPECT_NE(out.find(word), std::string::npos) << word << " in\n" << out;
  }
}

TEST(JsonMirrorCommand, UsageErrors) {
  EXPECT_THROW(run({"json-mirror"}), CLI::ParseError);
  EXPECT_THROW(run({"json-mirror", "bench"}), CLI::ParseError);
  EXPECT_THROW(run({"json-mirror", "bench", "x.fs", "--passes", "0"}), CLI::ParseError);
}

TEST(JsonMirrorCommand, MissingFileIsAnError) {
  EXPECT_THROW(run({"json-mirror", "bench", "/nonexistent/Data.fs"}), StorageError);
}

TEST(JsonMirrorCommand, FormatHasTheDocumentedKeys) {
  DecodeBenchStats s;
  s.records = 3;
  s.errors = 1;
  s.mean_us = 2.5;
  s.p50_us = 2;
  s.p95_us = 4;
  s.max_us = 4;
  s.mb_per_s = 900;
  s.bytes = 9000;
  s.passes = 5;
  s.sample_errors = {"oid 0x0000000000000001: pickle error at byte 0: unknown opcode"};
  const nlohmann::json j = nlohmann::json::parse(format_bench_stats(s, true));
  EXPECT_EQ(j["records"], 3);
  EXPECT_EQ(j["errors"], 1);
  EXPECT_DOUBLE_EQ(j["mean_us"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j["p50_us"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(j["p95_us"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(j["mb_per_s"].get<double>(), 900);
  const std::string table = format_bench_stats(s, false);
  EXPECT_NE(table.find("mean         2.50 us"), std::string::npos) << table;
  EXPECT_NE(table.find("error: oid 0x0000000000000001"), std::string::npos) << table;
}

}  // namespace
}  // namespace relstore
