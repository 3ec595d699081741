// The Data.fs reader on the shared corpus and on small hand-built files.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "relstore/filestorage.h"
#include "support/corpus.h"
#include "support/raw_data_fs.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::RawDataFs;
using testing::RawRecord;
using testing::TempDir;
using testing::with_back;
using testing::with_data;

std::vector<TransactionRecord> read_all(std::unique_ptr<TransactionIterator> it) {
  std::vector<TransactionRecord> out;
  TransactionRecord t;
  while (it->next(t)) out.push_back(t);
  return out;
}

bool same(const TransactionRecord& a, const TransactionRecord& b) {
  if (a.tid != b.tid || a.status != b.status || a.user != b.user ||
      a.description != b.description || a.extension != b.extension ||
      a.records.size() != b.records.size()) {
    return false;
  }
  for (size_t i = 0; i < a.records.size(); ++i) {
    const DataRecord& x = a.records[i];
    const DataRecord& y = b.records[i];
    if (x.oid != y.oid || x.tid != y.tid || x.data != y.data || x.data_txn != y.data_txn) {
      return false;
    }
  }
  return true;
}

// The class a record's first pickle names ("module.Name"), for protocol 2+ GLOBAL opcodes.
std::string class_of(const Bytes& data) {
  if (data.size() < 3 || data.compare(0, 3,
                                      "\x80\x03"
                                      "c") != 0)
    return "?";
  const size_t nl1 = data.find('\n', 3);
  const size_t nl2 = data.find('\n', nl1 + 1);
  return data.substr(3, nl1 - 3) + "." + data.substr(nl1 + 1, nl2 - nl1 - 1);
}

TEST(FileStorageReader, CorpusReadsForwardWithEveryRecord) {
  RELSTORE_CODEC_CORPUS(path);
  const auto txns = read_all(iterate_file_storage(path));
  size_t records = 0;
  std::set<std::string> classes;
  std::set<Oid> oids;
  for (const auto& t : txns) {
    EXPECT_EQ(t.status, ' ');
    for (const auto& r : t.records) {
      ++records;
      EXPECT_EQ(r.tid, t.tid);
      ASSERT_TRUE(r.data.has_value());
      classes.insert(class_of(*r.data));
      oids.insert(r.oid);
    }
  }
  EXPECT_EQ(txns.size(), 15u);
  EXPECT_EQ(records, 1692u);
  EXPECT_EQ(classes, (std::set<std::string>{
                         "persistent.mapping.PersistentMapping", "BTrees.OOBTree.OOBucket",
                         "persistent.list.PersistentList", "BTrees.OOBTree.OOBTree",
                         "BTrees.Length.Length", "BTrees.OIBTree.OIBTree"}));
  EXPECT_TRUE(oids.count(Oid(0)));
  EXPECT_EQ(txns.front().description, "initial database creation");
}

TEST(FileStorageReader, CorpusReadsBackwardIdentically) {
  RELSTORE_CODEC_CORPUS(path);
  const auto forward = read_all(iterate_file_storage(path));
  auto backward = read_all(iterate_file_storage_backward(path));
  ASSERT_EQ(forward.size(), backward.size());
  for (size_t i = 0; i < forward.size(); ++i) {
    EXPECT_TRUE(same(forward[i], backward[backward.size() - 1 - i])) << "transaction " << i;
  }
}

TEST(FileStorageReader, LastTidComesFromTheBackwardScan) {
  RELSTORE_CODEC_CORPUS(path);
  const auto all = read_all(iterate_file_storage(path));
  EXPECT_EQ(file_storage_last_tid(path), all.back().tid);

  TempDir dir;
  RawDataFs f;
  EXPECT_EQ((f.write(dir.sub("empty.fs")), file_storage_last_tid(dir.sub("empty.fs"))), Tid(0));
  f.add(10, {with_data(0, "a")});
  f.add(11, {with_data(0, "b")}, 'u');
  f.write(dir.sub("undone.fs"));
  EXPECT_EQ(file_storage_last_tid(dir.sub("undone.fs")), Tid(10));
  f.add(12, {with_data(0, "c")});
  f.bytes.resize(f.bytes.size() - 2);  // truncated tail: falls back to reading forward
  f.write(dir.sub("cut.fs"));
  std::vector<std::string> warnings;
  EXPECT_EQ(file_storage_last_tid(dir.sub("cut.fs"),
                                  [&](const std::string& w) { warnings.push_back(w); }),
            Tid(10));
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(FileStorageReader, CorpusStartStopAreInclusive) {
  RELSTORE_CODEC_CORPUS(path);
  const auto all = read_all(iterate_file_storage(path));
  ASSERT_GE(all.size(), 5u);
  auto mid = read_all(iterate_file_storage(path, all[2].tid, all[4].tid));
  ASSERT_EQ(mid.size(), 3u);
  EXPECT_EQ(mid.front().tid, all[2].tid);
  EXPECT_EQ(mid.back().tid, all[4].tid);
  // Bounds between TIDs.
  mid = read_all(
      iterate_file_storage(path, Tid(all[2].tid.value() + 1), Tid(all[4].tid.value() - 1)));
  ASSERT_EQ(mid.size(), 1u);
  EXPECT_EQ(mid.front().tid, all[3].tid);
  EXPECT_TRUE(
      read_all(iterate_file_storage(path, Tid(all[3].tid.value() + 1), all[3].tid)).empty());
}

TEST(FileStorageReader, BackPointersGiveDataAndDataTxn) {
  TempDir dir;
  RawDataFs f;
  f.add(10, {with_data(1, "one")}, ' ', "u", "d", "ext");
  const uint64_t first = f.record_pos.back();
  f.add(11, {with_data(1, "two")});
  f.add(12, {with_back(1, first)}, 'p');  // undo back to "one"
  const uint64_t undo = f.record_pos.back();
  f.add(13, {with_back(1, undo)});  // chain of two hops
  f.add(14, {with_back(1, 0)});     // absent
  f.write(dir.sub("Data.fs"));
  const auto t = read_all(iterate_file_storage(dir.sub("Data.fs")));
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].user, "u");
  EXPECT_EQ(t[0].description, "d");
  EXPECT_EQ(t[0].extension, "ext");
  EXPECT_EQ(t[0].records[0].data, "one");
  EXPECT_FALSE(t[0].records[0].data_txn);
  EXPECT_EQ(t[2].status, 'p');
  EXPECT_EQ(t[2].records[0].data, "one");
  EXPECT_EQ(t[2].records[0].data_txn, Tid(10));
  EXPECT_EQ(t[3].records[0].data, "one");
  EXPECT_EQ(t[3].records[0].data_txn, Tid(12));  // one hop back, not the end of the chain
  EXPECT_EQ(t[3].records[0].tid, Tid(13));
  EXPECT_FALSE(t[4].records[0].data);
  EXPECT_FALSE(t[4].records[0].data_txn);
  const auto b = read_all(iterate_file_storage_backward(dir.sub("Data.fs")));
  ASSERT_EQ(b.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(same(t[i], b[4 - i]));
}

// What ZODB's undo writes: the undo of a transaction that changed objects created by two
// others points its back pointers into both, alternately, and undoing again makes chains.
// Each resolves to its data (reading such files had taken time quadratic in their size:
// 34 s for a 7.5 MB file; docs/benchmarks.md has the figures).
TEST(FileStorageReader, BackPointersIntoSeveralTransactionsAndLongChainsResolve) {
  TempDir dir;
  RawDataFs f;
  constexpr uint64_t kPairs = 2000;
  std::vector<RawRecord> evens, odds, changed, undone;
  for (uint64_t i = 0; i < kPairs; ++i) {
    evens.push_back(with_data(2 * i, "a" + std::to_string(2 * i)));
    odds.push_back(with_data(2 * i + 1, "b" + std::to_string(2 * i + 1)));
  }
  f.add(10, evens);
  const std::vector<uint64_t> in_a = f.record_pos;
  f.add(11, odds);
  const std::vector<uint64_t> in_b(f.record_pos.begin() + kPairs, f.record_pos.end());
  for (uint64_t oid = 0; oid < 2 * kPairs; ++oid) changed.push_back(with_data(oid, "c"));
  f.add(12, changed);
  for (uint64_t oid = 0; oid < 2 * kPairs; ++oid) {
    undone.push_back(with_back(oid, oid % 2 ? in_b[oid / 2] : in_a[oid / 2]));
  }
  f.add(13, undone);
  // A chain: every transaction undoes to the one before it.
  f.add(14, {with_data(1'000'000, "chained")});
  for (uint64_t hop = 1; hop <= 3000; ++hop) {
    f.add(14 + hop, {with_back(1'000'000, f.record_pos.back())});
  }
  f.write(dir.sub("Data.fs"));
  auto st = open_file_storage(dir.sub("Data.fs"));
  auto inst = st->new_instance();
  for (uint64_t oid = 0; oid < 2 * kPairs; ++oid) {
    ASSERT_EQ(inst->load(Oid(oid)).data, (oid % 2 ? "b" : "a") + std::to_string(oid)) << oid;
  }
  EXPECT_EQ(inst->load(Oid(1'000'000)).data, "chained");
  const auto t = read_all(iterate_file_storage(dir.sub("Data.fs")));
  ASSERT_EQ(t.size(), 4u + 3001u);
  EXPECT_EQ(t[3].records[1].data, "b1");
  EXPECT_EQ(t.back().records[0].data, "chained");
}

TEST(FileStorageReader, EmptyTransactionsAndFS21) {
  TempDir dir;
  RawDataFs f("FS21");
  f.add(5, {});
  f.add(6, {with_data(0, "root")});
  f.write(dir.sub("Data.fs"));
  const auto t = read_all(iterate_file_storage(dir.sub("Data.fs")));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].records.empty());
  EXPECT_EQ(read_all(iterate_file_storage_backward(dir.sub("Data.fs"))).size(), 2u);
}

}  // namespace
}  // namespace relstore
