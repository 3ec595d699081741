// `relstore sample`: a reproducible content tree that reads back as a valid Data.fs.
#include "relstore/sample.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "relstore/filestorage.h"
#include "relstore/timestamp.h"
#include "sample/pickle_writer.h"
#include "support/file_size_limit.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

SampleStats sample_into(const std::string& path, uint64_t objects, uint64_t seed) {
  FileStorageOptions o;
  o.read_only = false;
  o.fsync_each_commit = false;
  auto s = open_file_storage(path, o);
  auto i = s->new_instance();
  SampleOptions so;
  so.objects = objects;
  so.seed = seed;
  const SampleStats stats = write_sample(*i, so);
  s->close();
  return stats;
}

TEST(Sample, ReadsBackWithEveryRecordAndObject) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  const SampleStats stats = sample_into(path, 2000, 7);
  EXPECT_EQ(stats.objects, 2000u);
  EXPECT_GT(stats.records, 2000u);  // folders are rewritten as they fill, documents edited

  auto it = iterate_file_storage(path);
  TransactionRecord t;
  uint64_t records = 0, transactions = 0, bytes = 0;
  std::set<Oid> oids;
  std::set<size_t> sizes;
  Tid last;
  while (it->next(t)) {
    ++transactions;
    EXPECT_GT(t.tid, last);
    last = t.tid;
    EXPECT_GE(t.records.size(), 1u);
    EXPECT_LE(t.records.size(), 50u);
    sizes.insert(t.records.size());
    for (const auto& r : t.records) {
      ASSERT_TRUE(r.data);
      EXPECT_EQ(r.data->substr(0, 3), std::string("\x80\x03"
                                                  "c"));
      EXPECT_EQ(r.data->back(), '.');
      bytes += r.data->size();
      oids.insert(r.oid);
      ++records;
    }
  }
  EXPECT_EQ(records, stats.records);
  EXPECT_EQ(transactions, stats.transactions);
  EXPECT_EQ(bytes, stats.bytes);
  EXPECT_EQ(oids.size(), 2000u);
  EXPECT_EQ(*oids.rbegin(), Oid(1999));
  EXPECT_GT(sizes.size(), 10u);  // transactions of mixed sizes

  auto s = open_file_storage(path);
  EXPECT_EQ(s->len(), 2000u);
  const Bytes root = s->new_instance()->load(Oid(0)).data;
  EXPECT_NE(root.find("persistent.mapping\nPersistentMapping\n"), std::string::npos);
  EXPECT_NE(root.find("section-0001"), std::string::npos);
  EXPECT_EQ(TimeStamp(s->info().last_tid).year(), 2024);
}

TEST(Sample, SameSeedGivesIdenticalBytes) {
  TempDir dir;
  sample_into(dir.sub("a.fs"), 500, 42);
  sample_into(dir.sub("b.fs"), 500, 42);
  sample_into(dir.sub("c.fs"), 500, 43);
  EXPECT_EQ(slurp(dir.sub("a.fs")), slurp(dir.sub("b.fs")));
  EXPECT_NE(slurp(dir.sub("a.fs")), slurp(dir.sub("c.fs")));
}

TEST(Sample, RefusesANonEmptyDestinationAndWritesTinyTrees) {
  TempDir dir;
  const std::string path = dir.sub("Data.fs");
  EXPECT_EQ(sample_into(path, 1, 1).records, 1u);
  EXPECT_THROW(sample_into(path, 10, 1), StorageError);
  EXPECT_EQ(sample_into(dir.sub("three.fs"), 3, 1).objects, 3u);
}

TEST(Sample, WritesThroughAFileUri) {
  TempDir dir;
  SampleOptions so;
  so.objects = 50;
  so.start_tid = Tid(0x03dfd117d4dbf099ULL);
  const SampleStats stats = write_sample("file://" + dir.sub("Data.fs"), so);
  auto s = open_storage("file://" + dir.sub("Data.fs"));
  EXPECT_TRUE(s->is_read_only());
  EXPECT_EQ(s->len(), 50u);
  EXPECT_EQ(s->info().transactions, stats.transactions);
  auto it = s->new_instance()->iterator();
  TransactionRecord t;
  ASSERT_TRUE(it->next(t));
  EXPECT_EQ(t.tid, Tid(0x03dfd117d4dbf099ULL));
  EXPECT_EQ(t.description, "initial database creation");
}

// A sample cut short (here by the process's file size limit, as by a full disk) keeps the
// transactions it committed, which read as a smaller, whole sample: the error says so.
TEST(Sample, ASampleCutShortSaysTheStorageHoldsAnIncompleteOne) {
  TempDir dir;
  std::string error;
  try {
    const testing::FileSizeLimit limit(64 * 1024);
    sample_into(dir.sub("Data.fs"), 2000, 1);
  } catch (const StorageError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("the storage now holds an incomplete sample ("), std::string::npos) << error;
  EXPECT_NE(error.find("delete it before writing a sample again"), std::string::npos) << error;
}

TEST(PickleWriter, OpcodesMatchPythonProtocol3) {
  sample::PickleWriter w;
  w.begin();
  w.global("datetime", "datetime");
  w.global("datetime", "datetime");
  w.integer(5);
  w.integer(300);
  w.integer(-1);
  w.integer(int64_t{1} << 40);
  w.unicode("hé");
  w.bytes("ab");
  w.end();
  using namespace std::string_literals;
  const std::string expected = "\x80\x03"s + "cdatetime\ndatetime\nq\x00"s + "h\x00"s + "K\x05"s +
                               "M\x2c\x01"s + "J\xff\xff\xff\xff"s +
                               "\x8a\x08\x00\x00\x00\x00\x00\x01\x00\x00"s +
                               "X\x03\x00\x00\x00h\xc3\xa9q\x01"s + "C\x02"s + "abq\x02."s;
  EXPECT_EQ(w.take(), expected);
}

}  // namespace
}  // namespace relstore
