// The relstore command line as users run it: exit codes, messages, and that inspecting a
// bad target creates or changes nothing (issue #2, acceptance "bad input").
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "relstore/storage.h"
#include "support/cli_run.h"
#include "support/commits.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

using testing::CliRun;

CliRun relstore(const std::string& args) { return testing::run_relstore(args); }

// Every file under `dir` with its size, to prove nothing changed.
std::map<std::string, uintmax_t> snapshot(const fs::path& dir) {
  std::map<std::string, uintmax_t> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out[e.path().string()] = e.is_regular_file() ? e.file_size() : 0;
  }
  return out;
}

TEST(Cli, HelpForEveryCommand) {
  for (const char* cmd :
       {"--help", "info --help", "bench --help", "pack --help", "verify --help"}) {
    const CliRun r = relstore(cmd);
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd;
  }
}

TEST(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(relstore("").code, 2);
  EXPECT_EQ(relstore("frobnicate").code, 2);
  EXPECT_EQ(relstore("info").code, 2);
  EXPECT_EQ(relstore("info sqlite:x --no-such-flag").code, 2);
}

// A directory given for a Data.fs is named as one (mmap said "No such device").
TEST(Cli, ADirectoryForADataFsIsNamedAsOne) {
  TempDir d;
  const CliRun r = relstore("info file://" + d.path().string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(d.path().string() + ": it is a directory"), std::string::npos) << r.out;
}

// A mistyped command is named, with the commands there are (CLI11 said only "A subcommand
// is required").
TEST(Cli, AMistypedCommandIsNamed) {
  CliRun r = relstore("inof sqlite:x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("relstore: unknown command 'inof' (commands: info, "), std::string::npos)
      << r.out;
  r = relstore("json-mirror stauts sqlite:x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("relstore json-mirror: unknown command 'stauts'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("status"), std::string::npos) << r.out;
}

TEST(Cli, InfoShowsTheDatabase) {
  TempDir d;
  {
    auto st = open_storage("sqlite://" + d.sub("db"));
    auto inst = st->new_instance();
    TransactionMetaData txn{"u", "d", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(1), std::nullopt, "hello", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  const auto before = snapshot(d.path());
  const CliRun r = relstore("info sqlite://" + d.sub("db"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("history       preserving"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("objects       1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("transactions  1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" UTC)"), std::string::npos) << r.out;
  const CliRun j = relstore("info --json sqlite://" + d.sub("db"));
  ASSERT_EQ(j.code, 0) << j.out;
  const auto parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed["objects"], 1);
  EXPECT_EQ(parsed["backend"], "sqlite");
  EXPECT_EQ(parsed["last_tid"].get<std::string>().size(), 18u);
  EXPECT_EQ(snapshot(d.path()), before);
}

TEST(Cli, InfoOnAMissingDatabaseCreatesNothing) {
  TempDir d;
  const CliRun r = relstore("info sqlite://" + d.sub("missing"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("no database at"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d.sub("missing")));
}

TEST(Cli, InfoOnAFileThatIsNotSqliteChangesNothing) {
  TempDir d;
  fs::create_directories(d.sub("junk"));
  std::ofstream(d.sub("junk/main.sqlite3")) << std::string(4096, 'j');
  const auto before = snapshot(d.path());
  const CliRun r = relstore("info sqlite://" + d.sub("junk"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("not a SQLite database"), std::string::npos) << r.out;
  EXPECT_EQ(snapshot(d.path()), before);
}

TEST(Cli, InfoOnAHistoryFreeDatabaseOpenedAsPreservingFails) {
  TempDir d;
  open_storage("sqlite://" + d.sub("hf") + "?history=free");
  const auto before = snapshot(d.path());
  const CliRun r = relstore("info 'sqlite://" + d.sub("hf") + "?history=preserving'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("history-free"), std::string::npos) << r.out;
  EXPECT_EQ(snapshot(d.path()), before);
}

TEST(Cli, ACountBelowOneSaysWhatIsWrong) {
  for (const char* args :
       {"convert --batch 0 sqlite:a sqlite:b", "bench --objects-per-txn 1,0 sqlite:a",
        "json-mirror follow --interval 0 sqlite:a"}) {
    const CliRun r = relstore(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.out.find("must be greater than 0, not "), std::string::npos) << args << r.out;
    EXPECT_EQ(r.out.find("not in range"), std::string::npos) << args << r.out;
  }
  // bench's sizes have an upper bound too: a mistyped size was a std::bad_alloc (exit 1).
  for (const char* args :
       {"bench --object-size 99999999999999 sqlite:a", "bench --concurrency 1,100000 sqlite:a"}) {
    const CliRun big = relstore(args);
    EXPECT_EQ(big.code, 2) << args;
    EXPECT_NE(big.out.find("not in range"), std::string::npos) << args << big.out;
  }
  // Nor may their product exceed what the workers could hold.
  const CliRun product =
      relstore("bench --object-size 268435456 --objects-per-txn 20 --concurrency 4 sqlite:a");
  EXPECT_EQ(product.code, 2);
  EXPECT_NE(product.out.find("more than 8 GiB"), std::string::npos) << product.out;
  const CliRun r = relstore("convert --batch 5x sqlite:a sqlite:b");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--batch: '5x' is not a whole number"), std::string::npos) << r.out;
}

// Whole numbers are read as written: CLI11 alone took "010" for 8, "0x10" for 16, "-1" for
// 2**64-1 and a number past 2**64 for 2**64-1 (a sample of that many objects ran until the
// disk was full).
TEST(Cli, WholeNumbersAreDecimalAndWithinRange) {
  TempDir d;
  const std::map<std::string, std::string> cases = {
      {"--objects -5", "'-5' is not a whole number"},
      {"--objects 0x10", "'0x10' is not a whole number"},
      {"--objects 010", "'010': write it without leading zeros"},
      {"--objects 99999999999999999999", "'99999999999999999999' is too large"},
      {"--seed -1", "'-1' is not a whole number"},
  };
  for (const auto& [option, message] : cases) {
    const CliRun r = relstore("sample " + option + " file://" + d.sub("s.fs"));
    EXPECT_EQ(r.code, 2) << option << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << option << ": " << r.out;
    EXPECT_FALSE(fs::exists(d.sub("s.fs"))) << option;
  }
}

// A --start-tid that is not a TID a database can hold (zero, negative, past 2**63, junk) is
// a usage error before anything is written.
TEST(Cli, AStartTidOutOfRangeIsAUsageErrorThatWritesNothing) {
  TempDir d;
  for (const char* tid : {"-1", "0", "0x8000000000000000", " 0x1", "0x", "12345678901234567"}) {
    const CliRun r = relstore("sample --objects 30 '--start-tid=" + std::string(tid) + "' file://" +
                              d.sub("s.fs"));
    EXPECT_EQ(r.code, 2) << tid << ": " << r.out;
    EXPECT_NE(r.out.find("--start-tid: expected a TID"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(d.sub("s.fs"))) << tid;
  }
  EXPECT_EQ(
      relstore("sample --objects 30 --start-tid 0x03f58e0000000000 file://" + d.sub("s.fs")).code,
      0);
}

// bench's workers are processes that write at once: a Data.fs (one writer process) is
// refused up front instead of failing after setup wrote into it.
TEST(Cli, BenchRefusesAFileStorage) {
  TempDir d;
  const CliRun r = relstore("bench --transactions 2 file://" + d.sub("b.fs"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("needs a database"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("objects/s"), std::string::npos) << "a table header: " << r.out;
  EXPECT_FALSE(std::filesystem::exists(d.sub("b.fs")));
}

TEST(Cli, MalformedUriAndUnknownSchemeAreUsageErrors) {
  CliRun r = relstore("info postgresql:nohost");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("malformed URI"), std::string::npos) << r.out;
  r = relstore("info oracle://scott:tiger@db/orcl");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("unknown URI scheme 'oracle'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tiger"), std::string::npos) << r.out;
  r = relstore("info 'sqlite:x?history=sometimes'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("option history"), std::string::npos) << r.out;
}

TEST(Cli, PasswordsAreNeverPrinted) {
  // Nothing listens on port 1: the connection fails, and the message must not leak.
  const CliRun r = relstore("info postgresql://zope:hunter2@127.0.0.1:1/db");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("zope:***@127.0.0.1:1/db"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << r.out;
}

TEST(Cli, BenchJsonHasOneObjectPerFigure) {
  TempDir d;
  const CliRun r = relstore(
      "bench --json --transactions 5 --objects-per-txn 1,5 --concurrency 1,2 "
      "sqlite://" +
      d.sub("bench"));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto figures = nlohmann::json::parse(r.out);
  ASSERT_EQ(figures.size(), 2u * 2u * 5u);
  std::set<std::string> tests;
  for (const auto& f : figures) {
    for (const char* key : {"backend", "test", "objects_per_txn", "concurrency", "ops_per_s"}) {
      EXPECT_TRUE(f.contains(key)) << key;
    }
    EXPECT_EQ(f["backend"], "sqlite");
    EXPECT_GT(f["ops_per_s"].get<double>(), 0);
    tests.insert(f["test"]);
  }
  EXPECT_EQ(tests, (std::set<std::string>{"add", "update", "cold_read", "hot_read", "conflicts"}));
}

// bench writes ZODB records like an application's: beside a sample tree, a pack reads
// them and removes them as the garbage they are (nothing references them), and the tree
// stays.
TEST(Cli, BenchObjectsAreRecordsAPackCollects) {
  TempDir d;
  const std::string uri = "sqlite://" + d.sub("db");
  ASSERT_EQ(relstore("sample --objects 50 " + uri).code, 0);
  const CliRun b = relstore("bench --transactions 5 --objects-per-txn 2 --concurrency 1 " + uri);
  ASSERT_EQ(b.code, 0) << b.out;
  const CliRun r = relstore("pack --json " + uri);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_GT(nlohmann::json::parse(r.out)["objects_removed"].get<int>(), 0) << r.out;
  const CliRun info = relstore("info --json " + uri);
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_EQ(nlohmann::json::parse(info.out)["objects"], 50);
}

// Ctrl-C during a conversion: it stops after the batch in hand, says the destination is
// an incomplete copy and how to finish it, and exits with 130; --incremental finishes it.
TEST(Cli, AnInterruptedConversionSaysSoAndResumes) {
  TempDir d;
  ASSERT_EQ(relstore("sample --objects 60000 file://" + d.sub("src.fs")).code, 0);
  const std::string bin = std::string(RELSTORE_BINARY_DIR) + "/tools/relstore";
  const std::string convert =
      bin + " convert --batch 200 file://" + d.sub("src.fs") + " sqlite://" + d.sub("part");
  // Once the first progress line shows (the handler is in place and batches are landing).
  const std::string script = "cd " + d.str() + " && { " + convert +
                             " >out.txt 2>err.txt & pid=$!; for i in $(seq 1 1000); do "
                             "grep -q progress err.txt && break; sleep 0.01; done; "
                             "kill -INT $pid; wait $pid; echo $?; cat err.txt; }";
  FILE* p = popen(script.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  EXPECT_EQ(out.substr(0, 4), "130\n") << out;
  EXPECT_NE(out.find("is an incomplete copy; run the same conversion with --incremental"),
            std::string::npos)
      << out;
  const CliRun resumed = relstore("convert --incremental --verify file://" + d.sub("src.fs") +
                                  " sqlite://" + d.sub("part"));
  EXPECT_EQ(resumed.code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("verify: source and destination are equal"), std::string::npos)
      << resumed.out;
}

// As README shows them in a fresh checkout: a new Data.fs in a directory that does not
// exist yet, and json-mirror bench taking the same file: URI as every other command.
TEST(Cli, AFileUriWorksAsTheReadmeShowsIt) {
  TempDir d;
  const std::string uri = "file://" + d.sub("var/deeper/sample.fs");
  const CliRun made = relstore("sample --objects 50 " + uri);
  EXPECT_EQ(made.code, 0) << made.out;
  const CliRun bench = relstore("json-mirror bench " + uri);
  EXPECT_EQ(bench.code, 0) << bench.out;
  EXPECT_NE(bench.out.find("errors       0"), std::string::npos) << bench.out;
}

// A file: destination's options are checked as any file: URI's: read_only, history=free
// and options no FileStorage takes are errors that write nothing, not ignored.
TEST(Cli, AFileDestinationsOptionsAreNotIgnored) {
  TempDir d;
  const std::string source = "file://" + d.sub("source.fs");
  ASSERT_EQ(relstore("sample --objects 20 " + source).code, 0);
  const std::map<std::string, std::string> cases = {
      {"read_only=true", "is marked read_only"},
      {"history=free", "always keeps history"},
      {"bogus=1", "option bogus does not apply to a file: URI"}};
  for (const auto& [option, message] : cases) {
    const std::string destination = d.sub("out-" + option.substr(0, 4) + ".fs");
    const CliRun r = relstore("convert " + source + " 'file://" + destination + "?" + option + "'");
    EXPECT_EQ(r.code, 2) << option << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(destination)) << option;
  }
  const CliRun info = relstore("info '" + source + "?bogus=1'");
  EXPECT_EQ(info.code, 2) << info.out;
  // create=false: the destination must exist.
  const CliRun missing =
      relstore("convert " + source + " 'file://" + d.sub("missing.fs") + "?create=false'");
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_NE(missing.out.find("create=false does not create it"), std::string::npos) << missing.out;
  EXPECT_FALSE(fs::exists(d.sub("missing.fs")));
}

// migrate on a Data.fs is a usage error that says why, not an "internal" one.
TEST(Cli, MigrateOnAFileUriSaysItHasNoSchema) {
  TempDir d;
  for (const char* sub : {"status", "up"}) {
    const CliRun r = relstore(std::string("migrate ") + sub + " file://" + d.sub("Data.fs"));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("has no schema to migrate"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("internal"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(d.sub("Data.fs")));
}

// `relstore pack` on the sample tree: every object is reachable, so only the revisions
// the sample superseded go; a Data.fs and a negative --days are refused.
TEST(Cli, PackKeepsTheSampleTreeAndDropsOldRevisions) {
  TempDir d;
  const std::string uri = "sqlite://" + d.sub("db");
  ASSERT_EQ(relstore("sample --objects 300 " + uri).code, 0);
  // --prepack-only reports what the pack below then removes.
  const CliRun plan = relstore("pack --prepack-only --check-refs --gc --json " + uri);
  ASSERT_EQ(plan.code, 0) << plan.out;
  const auto p = nlohmann::json::parse(plan.out);
  EXPECT_TRUE(p["prepack_only"].get<bool>());
  EXPECT_NE(relstore("pack --prepack-only " + uri).out.find("nothing was removed (--prepack-only)"),
            std::string::npos);
  const CliRun r = relstore("pack --json " + uri);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["objects_removed"], 0);
  EXPECT_GT(j["revisions_removed"].get<int>(), 0);
  EXPECT_EQ(j["revisions_removed"], p["revisions_removed"]);
  EXPECT_EQ(j["transactions_removed"], p["transactions_removed"]);
  EXPECT_FALSE(j["prepack_only"].get<bool>());
  const CliRun info = relstore("info --json " + uri);
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_EQ(nlohmann::json::parse(info.out)["objects"], 300);
  EXPECT_NE(relstore("pack " + uri).out.find("0 objects, 0 old revisions"), std::string::npos);
  EXPECT_EQ(relstore("pack --days -1 " + uri).code, 2);
  // A pack time before 1900, where TIDs begin, keeps everything.
  const CliRun ancient = relstore("pack --json --days 100000 " + uri);
  ASSERT_EQ(ancient.code, 0) << ancient.out;
  EXPECT_EQ(nlohmann::json::parse(ancient.out)["pack_tid"], "0x0000000000000001");
  ASSERT_EQ(relstore("sample --objects 30 file://" + d.sub("s.fs")).code, 0);
  const CliRun file = relstore("pack file://" + d.sub("s.fs"));
  EXPECT_EQ(file.code, 1);
  EXPECT_NE(file.out.find("zodbpack"), std::string::npos) << file.out;
}

// `relstore verify`: a sample tree passes; a reference to an object that does not exist
// fails it (exit 1), naming both ends; an unlinked object counts as unreachable.
TEST(Cli, VerifyFindsDanglingReferencesAndGarbage) {
  TempDir d;
  const std::string uri = "sqlite://" + d.sub("db");
  ASSERT_EQ(relstore("sample --objects 40 " + uri).code, 0);
  const CliRun good = relstore("verify " + uri);
  EXPECT_EQ(good.code, 0) << good.out;
  EXPECT_NE(good.out.find("40 objects"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("\nok\n"), std::string::npos) << good.out;
  {
    auto st = open_storage(uri);
    auto inst = st->new_instance();
    const Tid root = inst->load(Oid(0)).tid;
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(0), root, testing::mapping_of({999}), txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  const CliRun bad = relstore("verify " + uri);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("0x0000000000000000 -> 0x00000000000003e7"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("FAILED"), std::string::npos) << bad.out;
  const CliRun j = relstore("verify --json " + uri);
  ASSERT_EQ(j.code, 1) << j.out;
  const size_t open = j.out.find('{');
  const auto parsed = nlohmann::json::parse(j.out.substr(open, j.out.rfind('}') + 1 - open));
  EXPECT_EQ(parsed["dangling"], 1);
  EXPECT_EQ(parsed["unreachable"], 39);  // the rest of the tree, now unlinked
  EXPECT_FALSE(parsed["ok"].get<bool>());
}

}  // namespace
}  // namespace relstore
