// The decoder on the shared codec corpus (1,692 real ZODB records): every record decodes to
// valid JSON, the scanner finds the decoder's references, selected records match the
// hand-written golden files, and the benchmark function counts what it decoded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "relstore/filestorage.h"
#include "relstore/pickle.h"
#include "support/corpus.h"

namespace relstore {
namespace {

struct CorpusRecord {
  Oid oid;
  Tid tid;
  Bytes data;
};

std::vector<CorpusRecord> read_corpus(const std::string& path) {
  std::vector<CorpusRecord> out;
  auto it = iterate_file_storage(path);
  TransactionRecord txn;
  while (it->next(txn)) {
    for (DataRecord& r : txn.records) {
      if (r.data) out.push_back({r.oid, r.tid, std::move(*r.data)});
    }
  }
  return out;
}

TEST(PickleCorpus, EveryRecordDecodesToValidJson) {
  RELSTORE_CODEC_CORPUS(path);
  const std::vector<CorpusRecord> records = read_corpus(path);
  ASSERT_EQ(records.size(), 1692u);
  RecordDecoder decoder;
  DecodedRecord out;
  std::map<std::string, int> classes;
  size_t with_refs = 0;
  for (const CorpusRecord& r : records) {
    SCOPED_TRACE("oid " + r.oid.hex() + " tid " + r.tid.hex());
    ASSERT_NO_THROW(decoder.decode(r.data, out));
    ++classes[out.class_name];
    EXPECT_EQ(r.data.compare(0, out.ghost_pickle.size(), out.ghost_pickle), 0);
    EXPECT_TRUE(nlohmann::json::accept(out.json));
    if (!out.refs.empty()) ++with_refs;
  }
  EXPECT_EQ(classes.size(), 6u);
  EXPECT_EQ(classes["persistent.mapping.PersistentMapping"], 1188);
  EXPECT_EQ(classes["BTrees.OOBTree.OOBucket"], 342);
  EXPECT_GT(with_refs, 400u);
}

TEST(PickleCorpus, ScannerFindsTheDecodersReferences) {
  RELSTORE_CODEC_CORPUS(path);
  size_t refs = 0;
  for (const CorpusRecord& r : read_corpus(path)) {
    const DecodedRecord d = decode_record(r.data);
    ASSERT_EQ(scan_references(r.data), d.refs) << "oid " << r.oid.hex() << " tid " << r.tid.hex();
    refs += d.refs.size();
  }
  EXPECT_GT(refs, 10000u);
}

TEST(PickleCorpus, GoldenFiles) {
  RELSTORE_CODEC_CORPUS(path);
  std::map<std::pair<uint64_t, uint64_t>, Bytes> by_key;
  for (CorpusRecord& r : read_corpus(path)) {
    by_key[{r.oid.value(), r.tid.value()}] = std::move(r.data);
  }
  const std::filesystem::path dir =
      std::filesystem::path(RELSTORE_SOURCE_DIR) / "tests/golden/json_mirror";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path());
    const nlohmann::json golden = nlohmann::json::parse(in);
    const uint64_t oid = std::stoull(golden["oid"].get<std::string>(), nullptr, 16);
    const uint64_t tid = std::stoull(golden["tid"].get<std::string>(), nullptr, 16);
    const auto found = by_key.find({oid, tid});
    ASSERT_NE(found, by_key.end());
    const DecodedRecord d = decode_record(found->second);
    EXPECT_EQ(d.class_name, golden["class_name"].get<std::string>());
    std::vector<uint64_t> refs;
    for (Oid o : d.refs) refs.push_back(o.value());
    EXPECT_EQ(refs, golden["refs"].get<std::vector<uint64_t>>());
    EXPECT_EQ(nlohmann::json::parse(d.json), golden["state"]) << d.json;
  }
  EXPECT_EQ(files, 11u);
}

TEST(PickleCorpus, BenchDecodeCountsEveryRecord) {
  RELSTORE_CODEC_CORPUS(path);
  auto it = iterate_file_storage(path);
  const DecodeBenchStats s = bench_decode(*it, 1);
  EXPECT_EQ(s.records, 1692u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_TRUE(s.sample_errors.empty());
  EXPECT_EQ(s.passes, 1);
  EXPECT_GT(s.bytes, 5'000'000u);
  EXPECT_GT(s.mean_us, 0);
  EXPECT_LE(s.p50_us, s.p95_us);
  EXPECT_LE(s.p95_us, s.max_us);
  EXPECT_GT(s.mb_per_s, 0);
}

}  // namespace
}  // namespace relstore
