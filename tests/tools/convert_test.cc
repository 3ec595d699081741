// relstore convert (issue #5): chains of conversions that must end where they began,
// resumable history-free loads, and refusals that change nothing.
#include "relstore/convert.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "backend/registry.h"
#include "filestorage/format.h"
#include "relstore/blob_dir.h"
#include "relstore/errors.h"
#include "relstore/filestorage.h"
#include "relstore/json_mirror.h"
#include "relstore/ops.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "relstore/timestamp.h"
#include "support/compare.h"
#include "support/corpus.h"
#include "support/server_db.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string sample_file(const TempDir& d, uint64_t objects, const std::string& name = "Data.fs") {
  const std::string path = d.sub(name);
  SampleOptions o;
  o.objects = objects;
  o.seed = 7;
  write_sample("file://" + path, o);
  return path;
}

ConvertReport run(const std::string& src, const std::string& dst,
                  std::function<void(ConvertOptions&)> tweak = {}) {
  ConvertOptions o;
  o.source = src;
  o.destination = dst;
  if (tweak) tweak(o);
  return convert(o);
}

// The legs a chain passes through: SQLite always; PostgreSQL and MySQL when the test
// environment names their servers (CI does), each in the mode asked for.
std::vector<std::string> server_legs(bool keep_history) {
  std::vector<std::string> out;
  for (Scheme scheme : {Scheme::postgresql, Scheme::mysql}) {
    if (!testing::server_base_uri(scheme)) {
      if (testing::server_required(scheme)) ADD_FAILURE() << "a required server is not configured";
      continue;
    }
    // A database of its own per mode (a database keeps one mode for its life); ctest keeps
    // these tests from running alongside that backend's conformance suite.
    out.push_back(testing::server_database_uri(scheme, keep_history ? "_convert_hp" : "_convert_hf",
                                               keep_history));
  }
  return out;
}

// A SQLite database in `d` named after `name` and the mode, then the server legs.
std::vector<std::string> database_legs(const TempDir& d, const std::string& name,
                                       bool keep_history) {
  std::vector<std::string> legs = {"sqlite://" + d.sub(name + (keep_history ? "_hp" : "_hf")) +
                                   (keep_history ? "?history=preserving" : "?history=free")};
  for (const auto& s : server_legs(keep_history)) legs.push_back(s);
  return legs;
}

void check_chain(const std::string& original, bool keep_history, const TempDir& d) {
  std::vector<std::string> legs = {"sqlite://" + d.sub(keep_history ? "hp" : "hf") +
                                   (keep_history ? "?history=preserving" : "?history=free")};
  for (const auto& s : server_legs(keep_history)) legs.push_back(s);
  const std::string back = "file://" + d.sub(keep_history ? "back-hp.fs" : "back-hf.fs");
  legs.push_back(back);
  std::string from = "file://" + original;
  for (const auto& to : legs) {
    SCOPED_TRACE(from + " -> " + StorageUri::parse(to).redacted());
    const auto r = run(from, to, [](ConvertOptions& o) {
      o.clear = true;
      o.verify = true;
    });
    EXPECT_TRUE(r.differences.empty()) << r.differences.front();
    from = to;
  }
  // The last file against the first one: every transaction (HP) or current record (HF).
  if (keep_history) {
    EXPECT_EQ(testing::storage_differences("file://" + original, back), std::vector<std::string>{});
  } else {
    // Through a history-free database only current records survive: compare those.
    auto a = open_file_storage(original);
    auto b = open_file_storage(StorageUri::parse(back).database);
    auto ia = a->new_instance();
    auto ib = b->new_instance();
    std::optional<Oid> next;
    size_t n = 0;
    while (auto ra = ia->record_iternext(next)) {
      const auto lb = ib->load(ra->oid);
      EXPECT_EQ(lb.data, ra->data) << ra->oid.hex();
      EXPECT_EQ(lb.tid, ra->tid) << ra->oid.hex();
      ++n;
      if (!ra->next) break;
      next = ra->next;
    }
    EXPECT_EQ(b->len(), n);
  }
}

TEST(Convert, SampleChainPreservesEveryTransaction) {
  TempDir d;
  check_chain(sample_file(d, 3000), true, d);
}

TEST(Convert, SampleChainPreservesEveryCurrentRecordHistoryFree) {
  TempDir d;
  check_chain(sample_file(d, 3000), false, d);
}

TEST(Convert, CorpusChainPreservesEveryTransaction) {
  RELSTORE_CODEC_CORPUS(corpus);
  TempDir d;
  check_chain(corpus, true, d);
}

TEST(Convert, CorpusChainPreservesEveryCurrentRecordHistoryFree) {
  RELSTORE_CODEC_CORPUS(corpus);
  TempDir d;
  check_chain(corpus, false, d);
}

TEST(Convert, NonEmptyDestinationIsRefusedUnchanged) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 200);
  const std::string dst = "sqlite://" + d.sub("db");
  run(src, dst);
  const auto before = open_storage(dst)->info();
  try {
    run(src, dst);
    FAIL() << "a second conversion into a full destination went through";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos) << e.what();
  }
  const auto after = open_storage(dst)->info();
  EXPECT_EQ(after.transactions, before.transactions);
  EXPECT_EQ(after.last_tid, before.last_tid);
}

TEST(Convert, IncrementalContinuesAfterTheLastTid) {
  TempDir d;
  const std::string path = sample_file(d, 600);
  // A copy of the first half of the source.
  const std::string half = d.sub("half.fs");
  {
    auto src = open_file_storage(path);
    auto info = src->info();
    FileStorageOptions fo;
    fo.read_only = false;
    auto dst = open_file_storage(half, fo);
    auto si = src->new_instance();
    auto di = dst->new_instance();
    auto it = si->iterator();
    TransactionRecord t;
    for (uint64_t i = 0; i < info.transactions / 2 && it->next(t); ++i) {
      const TransactionMetaData m{t.user, t.description, t.extension};
      di->tpc_begin(m, t.tid, t.status);
      for (const auto& r : t.records) di->restore(r.oid, t.tid, r.data, m);
      di->tpc_vote(m);
      di->tpc_finish(m);
    }
  }
  for (bool hp : {true, false}) {
    const std::string dst =
        "sqlite://" + d.sub(hp ? "inc-hp" : "inc-hf") + (hp ? "" : "?history=free");
    run("file://" + half, dst);
    const auto r = run("file://" + path, dst, [](ConvertOptions& o) { o.incremental = true; });
    ASSERT_TRUE(r.started_after);
    EXPECT_GT(r.done.transactions, 0u);
    EXPECT_EQ(testing::storage_differences("file://" + path, dst), std::vector<std::string>{})
        << hp;
  }
}

TEST(Convert, ClearReplacesAndDryRunChangesNothing) {
  TempDir d;
  const std::string a = "file://" + sample_file(d, 200, "a.fs");
  const std::string b = "file://" + sample_file(d, 300, "b.fs");
  const std::string dst = "sqlite://" + d.sub("db");
  // A dry run into nothing creates nothing.
  const auto dry = run(a, dst, [](ConvertOptions& o) { o.dry_run = true; });
  EXPECT_GT(dry.done.records, 0u);
  EXPECT_FALSE(fs::exists(d.sub("db")));
  run(a, dst);
  const auto dry2 = run(b, dst, [](ConvertOptions& o) {
    o.dry_run = true;
    o.clear = true;
  });
  EXPECT_TRUE(dry2.cleared);
  EXPECT_EQ(testing::storage_differences(a, dst), std::vector<std::string>{});
  run(b, dst, [](ConvertOptions& o) { o.clear = true; });
  EXPECT_EQ(testing::storage_differences(b, dst), std::vector<std::string>{});
}

TEST(Convert, TheDestinationAllocatorEndsAboveTheLargestOid) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 500);
  for (const char* q : {"", "?history=free"}) {
    const std::string dst = "sqlite://" + d.sub(std::string("alloc") + (*q ? "hf" : "hp")) + q;
    run(src, dst);
    auto st = open_storage(dst);
    EXPECT_GE(st->new_instance()->new_oid(), Oid(500)) << q;
  }
}

TEST(Convert, DamagedSourcesAreClearErrorsAndCommitOnlyWholeTransactions) {
  TempDir d;
  const std::string good = sample_file(d, 300);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(d.sub(name), std::ios::binary) << content;
    return "file://" + d.sub(name);
  };
  // Wrong magic: nothing is created.
  EXPECT_THROW(run(write("magic.fs", "FS99" + bytes.substr(4)), "sqlite://" + d.sub("m")),
               StorageError);
  // A corrupted length in the middle: an error naming the offset. (A byte changed inside
  // a pickle would go unnoticed: Data.fs has no checksums.) The length is the first data
  // record's plen in the transaction that spans the middle of the file.
  std::string corrupt = bytes;
  const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
  relstore::fs::TxnHeader txn = relstore::fs::decode_txn_header(raw + 4, 4);
  while (txn.next() <= bytes.size() / 2)
    txn = relstore::fs::decode_txn_header(raw + txn.next(), txn.next());
  const relstore::fs::DataHeader first =
      relstore::fs::decode_data_header(raw + txn.records_begin(), txn.records_begin());
  ASSERT_GT(first.plen, 0u);
  corrupt[first.pos + relstore::fs::kDataHeaderSize - 3] ^= 0x5a;  // plen's third byte from the end
  const std::string corrupt_uri = write("corrupt.fs", corrupt);
  try {
    run(corrupt_uri, "sqlite://" + d.sub("c"));
    FAIL() << "the damaged length went unnoticed";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
  }
  // Whatever reached the destination is whole transactions of the source.
  {
    auto src = open_file_storage(good);
    auto dst = open_storage("sqlite://" + d.sub("c"));
    auto it = dst->new_instance()->iterator();
    TransactionRecord t;
    while (it->next(t)) {
      auto h = src->new_instance()->iterator(t.tid, t.tid);
      TransactionRecord s;
      ASSERT_TRUE(h->next(s));
      EXPECT_EQ(s.records.size(), t.records.size());
    }
  }
  // A truncated tail: a warning and a clean stop at the last complete transaction.
  const std::string truncated = write("trunc.fs", bytes.substr(0, bytes.size() - 100));
  const auto r = run(truncated, "sqlite://" + d.sub("t"));
  auto full = open_file_storage(good);
  EXPECT_EQ(r.done.transactions + 1, full->info().transactions);
}

TEST(Convert, TheOtherModeAndAnUnreachableDestinationChangeNothing) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 100);
  open_storage("sqlite://" + d.sub("hf") + "?history=free")->close();
  EXPECT_THROW(run(src, "sqlite://" + d.sub("hf") + "?history=preserving"), SchemaError);
  EXPECT_EQ(open_storage("sqlite://" + d.sub("hf"))->info().transactions, 0u);
  EXPECT_THROW(run(src, "postgresql://nobody:secret@127.0.0.1:1/none"), StorageError);
}

// A source transaction the destination cannot take stops the copy part-way; the error
// says what was copied before it and that the destination is incomplete (a Data.fs holds
// at most 65,535 bytes of description).
// Refusing a destination Data.fs that is not empty leaves it as it was: its damaged tail
// is not moved aside nor its index removed, as opening it for writing would.
TEST(Convert, ARefusedDataFsDestinationIsLeftAsItWas) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 50, "src.fs");
  const std::string victim = sample_file(d, 60, "victim.fs");
  std::filesystem::resize_file(victim, std::filesystem::file_size(victim) - 10);  // a cut tail
  std::ofstream(victim + ".index") << "an index";
  const auto size = std::filesystem::file_size(victim);
  try {
    run(src, "file://" + victim);
    FAIL() << "converted into a Data.fs that has transactions";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("is not empty"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(victim), size);
  EXPECT_TRUE(std::filesystem::exists(victim + ".index"));
  EXPECT_FALSE(std::filesystem::exists(victim + ".tr0"));
  // An empty file (touch, mktemp) is no Data.fs yet, and takes the copy.
  std::ofstream(d.sub("empty.fs")).close();
  run(src, "file://" + d.sub("empty.fs"));
  EXPECT_EQ(testing::storage_differences(src, "file://" + d.sub("empty.fs")),
            std::vector<std::string>{});
}

// FS21 marks a Data.fs of ZODB on Python 2 (Python 2 pickles); a copy keeps the mark, so
// that ZODB on Python 3 still refuses it instead of misreading its strings, and records of
// one kind are not appended to a file marked for the other.
TEST(Convert, APython2DataFsStaysMarkedAsOne) {
  TempDir d;
  const std::string py3 = sample_file(d, 30, "py3.fs");
  std::ifstream in(py3, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string py2 = d.sub("py2.fs");
  std::ofstream(py2, std::ios::binary) << "FS21" + bytes.substr(4);
  run("file://" + py2, "file://" + d.sub("copy.fs"));
  std::ifstream copy(d.sub("copy.fs"), std::ios::binary);
  std::string magic(4, ' ');
  copy.read(magic.data(), 4);
  EXPECT_EQ(magic, "FS21");
  const auto size = std::filesystem::file_size(d.sub("copy.fs"));
  try {
    run("file://" + py3, "file://" + d.sub("copy.fs"), [](ConvertOptions& o) { o.clear = true; });
    FAIL() << "Python 3 records went into a file marked FS21";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing was changed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(d.sub("copy.fs")), size);
}

TEST(Convert, AnErrorPartWaySaysTheDestinationIsIncomplete) {
  TempDir d;
  const std::string src = "sqlite://" + d.sub("src");
  {
    auto st = open_storage(src);
    auto inst = st->new_instance();
    for (int i = 0; i < 4; ++i) {
      TransactionMetaData txn{"", i == 2 ? std::string(70000, 'd') : "short", ""};
      inst->tpc_begin(txn);
      inst->store(Oid(static_cast<uint64_t>(i)), std::nullopt, "state", txn);
      inst->tpc_vote(txn);
      inst->tpc_finish(txn);
    }
  }
  try {
    run(src, "file://" + d.sub("Data.fs"));
    FAIL() << "a 70,000-byte description was written";
  } catch (const StorageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("source transaction 0x"), std::string::npos) << what;
    EXPECT_NE(what.find("description of 70000 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("2 transactions were copied into file://"), std::string::npos) << what;
    EXPECT_NE(what.find("incomplete copy"), std::string::npos) << what;
  }
}

// An error keeps its kind when the message says what the copy left: a usage error found
// part-way stays one (exit status 2 from the command line).
TEST(Convert, AUsageErrorPartWayStaysOne) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 300);
  try {
    run(src, "sqlite://" + d.sub("dst"), [](ConvertOptions& o) {
      o.batch_records = 50;
      o.on_progress = [](const ConvertProgress& p) {
        if (p.transactions > 0) throw ConfigError("a usage error found late");
      };
    });
    FAIL() << "the error was lost";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a usage error found late; "), std::string::npos) << what;
    EXPECT_NE(what.find("incomplete copy"), std::string::npos) << what;
  }
}

// The Data.fs of the blob tests: oid 7 a blob record (with its file in d/blobs), oid 1 not.
Tid write_blob_source(const TempDir& d, const std::string& contents) {
  const std::string blob_record = std::string(
                                      "\x80\x03"
                                      "cZODB.blob\nBlob\nq\x00N\x86q\x01.",
                                      25) +
                                  std::string("\x80\x03N.", 4);
  const Tid tid = TimeStamp(2024, 1, 1, 0, 0, 0).tid();
  FileStorageOptions fo;
  fo.read_only = false;
  auto fsx = open_file_storage(d.sub("blobs.fs"), fo);
  auto inst = fsx->new_instance();
  const TransactionMetaData m{"u", "blob", ""};
  inst->tpc_begin(m, tid);
  inst->restore(Oid(1), tid, std::string("\x80\x03N.\x80\x03N.", 8), m);
  inst->restore(Oid(7), tid, blob_record, m);
  inst->tpc_vote(m);
  inst->tpc_finish(m);
  BlobDir::create(d.sub("blobs")).write_blob(Oid(7), tid, contents);
  return tid;
}

TEST(Convert, BlobsFollowTheirRecordsOrStopTheConversion) {
  TempDir d;
  const Tid tid = write_blob_source(d, "blob contents");
  const std::string path = d.sub("blobs.fs");

  // A blob file the source blob directory lacks: an error naming the oid, nothing copied.
  BlobDir::create(d.sub("no-blobs"));
  try {
    run("file://" + path, "sqlite://" + d.sub("db"),
        [&](ConvertOptions& o) { o.source_blob_dir = d.sub("no-blobs"); });
    FAIL();
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("0x0000000000000007"), std::string::npos) << e.what();
  }
  // --skip-blobs copies the records and counts what was left behind.
  const auto skipped = run("file://" + path, "sqlite://" + d.sub("db2"), [&](ConvertOptions& o) {
    o.source_blob_dir = d.sub("no-blobs");
    o.skip_blobs = true;
  });
  EXPECT_EQ(skipped.blobs_skipped, 1u);
  EXPECT_EQ(skipped.done.records, 2u);
  // Data.fs to Data.fs with blob directories copies the blob file.
  const auto copied = run("file://" + path, "file://" + d.sub("copy.fs"), [&](ConvertOptions& o) {
    o.source_blob_dir = d.sub("blobs");
    o.destination_blob_dir = d.sub("copy-blobs");
  });
  EXPECT_EQ(copied.blobs_copied, 1u);
  EXPECT_EQ(BlobDir::open(d.sub("copy-blobs")).read_blob(Oid(7), tid), "blob contents");
}

// Into a database the blob goes into blob_chunk with its record, and out of one into a
// Data.fs's blob directory again, both modes, verified on the way (--verify reads the
// database's blobs); the database's own cache directory is filled when given.
TEST(Convert, BlobsGoIntoAndOutOfDatabases) {
  TempDir d;
  const Tid tid = write_blob_source(d, "blob contents");
  for (const std::string query : {"", "?history=free"}) {
    SCOPED_TRACE(query);
    const std::string db = "sqlite://" + d.sub("db" + query.substr(query.empty() ? 0 : 9)) + query;
    const auto in = run("file://" + d.sub("blobs.fs"), db, [&](ConvertOptions& o) {
      o.source_blob_dir = d.sub("blobs");
      o.verify = true;
    });
    EXPECT_EQ(in.blobs_copied, 1u);
    EXPECT_TRUE(in.verified);
    EXPECT_EQ(in.differences, std::vector<std::string>{});
    auto storage = open_storage(db + (query.empty() ? "?" : "&") +
                                "blob_dir=" + d.sub("cache" + std::to_string(query.size())));
    auto inst = storage->new_instance();
    std::ifstream blob(inst->load_blob(Oid(7), tid), std::ios::binary);
    std::string content((std::istreambuf_iterator<char>(blob)), std::istreambuf_iterator<char>());
    EXPECT_EQ(content, "blob contents");

    const std::string out = "out" + std::to_string(query.size());
    const auto back = run(db, "file://" + d.sub(out + ".fs"), [&](ConvertOptions& o) {
      o.destination_blob_dir = d.sub(out + "-blobs");
      o.verify = true;
    });
    EXPECT_EQ(back.blobs_copied, 1u);
    EXPECT_EQ(back.differences, std::vector<std::string>{});
    EXPECT_EQ(BlobDir::open(d.sub(out + "-blobs")).read_blob(Oid(7), tid), "blob contents");

    // Database to database: the blob read out of the source is handed over, not copied.
    const std::string again = "sqlite://" + d.sub("again" + std::to_string(query.size())) + query;
    const auto across = run(db, again, [&](ConvertOptions& o) { o.verify = true; });
    EXPECT_EQ(across.blobs_copied, 1u);
    EXPECT_TRUE(across.verified);
    EXPECT_EQ(across.differences, std::vector<std::string>{});
  }
}

// --verify compares blob files too: one changed after the copy is a difference.
TEST(Convert, VerifyComparesBlobFiles) {
  TempDir d;
  const Tid tid = write_blob_source(d, "blob contents");
  const auto options = [&](ConvertOptions& o) {
    o.source_blob_dir = d.sub("blobs");
    o.destination_blob_dir = d.sub("copy-blobs");
    o.verify = true;
  };
  const auto r = run("file://" + d.sub("blobs.fs"), "file://" + d.sub("copy.fs"), options);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.differences, std::vector<std::string>{});
  // The copy's blob file rewritten with other bytes of the same length.
  const BlobDir copy = BlobDir::open(d.sub("copy-blobs"));
  fs::permissions(copy.blob_path(Oid(7), tid), fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(copy.blob_path(Oid(7), tid), std::ios::binary | std::ios::trunc) << "BLOB CONTENTS";
  StorageOptions ro;
  ro.read_only = true;
  BlobDir source = BlobDir::open(d.sub("blobs"));
  auto a = open_storage(StorageUri::parse("file://" + d.sub("blobs.fs")), ro);
  auto b = open_storage(StorageUri::parse("file://" + d.sub("copy.fs")), ro);
  const auto differences = compare_storages(*a, *b, 20, &source, &copy);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_NE(differences[0].find("oid 0x0000000000000007: blob contents differ"), std::string::npos)
      << differences[0];
  fs::remove(copy.blob_path(Oid(7), tid));
  EXPECT_NE(compare_storages(*a, *b, 20, &source, &copy)[0].find("missing from the destination"),
            std::string::npos);
}

// From a history-free source (a RelStorage database with a shared blob directory) records
// are compared current by current; their blob files too.
TEST(Convert, VerifyComparesBlobFilesFromAHistoryFreeSource) {
  TempDir d;
  const Tid tid = write_blob_source(d, "blob contents");
  const std::string hf = "sqlite://" + d.sub("hf") + "?history=free";
  run("file://" + d.sub("blobs.fs"), hf, [&](ConvertOptions& o) {
    o.source_blob_dir = d.sub("blobs");
    o.skip_blobs = true;  // the database keeps the records; the files stay where they are
  });
  const auto copy = run(hf, "file://" + d.sub("copy.fs"), [&](ConvertOptions& o) {
    o.source_blob_dir = d.sub("blobs");
    o.destination_blob_dir = d.sub("copy-blobs");
    o.verify = true;
  });
  EXPECT_EQ(copy.differences, std::vector<std::string>{});
  const BlobDir source = BlobDir::open(d.sub("blobs"));
  const BlobDir destination = BlobDir::open(d.sub("copy-blobs"));
  fs::remove(destination.blob_path(Oid(7), tid));
  auto a = open_storage(hf);
  auto b = open_storage("file://" + d.sub("copy.fs"));
  const auto differences = compare_storages(*a, *b, 20, &source, &destination);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_NE(differences[0].find("blob file missing from the destination"), std::string::npos)
      << differences[0];
}

// --clear empties the Data.fs, not its blob directory: blob files of the database it held
// could pass for the blobs of the new one, so the conversion refuses before changing
// anything. A fresh conversion into an empty Data.fs likewise.
TEST(Convert, StartingOverRefusesABlobDirectoryWithFiles) {
  TempDir d;
  write_blob_source(d, "blob contents");
  const auto into_copy = [&](bool clear) {
    return [&, clear](ConvertOptions& o) {
      o.source_blob_dir = d.sub("blobs");
      o.destination_blob_dir = d.sub("copy-blobs");
      o.clear = clear;
    };
  };
  run("file://" + d.sub("blobs.fs"), "file://" + d.sub("copy.fs"), into_copy(false));
  const auto size_before = fs::file_size(d.sub("copy.fs"));
  for (bool clear : {true, false}) {
    const std::string dst = clear ? "copy.fs" : "fresh.fs";
    try {
      run("file://" + d.sub("blobs.fs"), "file://" + d.sub(dst), into_copy(clear));
      ADD_FAILURE() << dst << ": converted over a blob directory with files";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("holds blob files ("), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(fs::file_size(d.sub("copy.fs")), size_before);
  EXPECT_FALSE(fs::exists(d.sub("fresh.fs")));
}

// What a killed conversion left in the destination's tmp/ goes at the next run.
TEST(Convert, AResumeRemovesTheTemporariesOfAKilledRun) {
  TempDir d;
  write_blob_source(d, "blob contents");
  BlobDir::create(d.sub("copy-blobs"));
  std::ofstream(d.sub("copy-blobs/tmp/relstore-abc123")) << "half a blob";
  std::ofstream(d.sub("copy-blobs/tmp/zodb-own-file")) << "not ours";
  run("file://" + d.sub("blobs.fs"), "file://" + d.sub("copy.fs"), [&](ConvertOptions& o) {
    o.source_blob_dir = d.sub("blobs");
    o.destination_blob_dir = d.sub("copy-blobs");
    o.incremental = true;
  });
  EXPECT_FALSE(fs::exists(d.sub("copy-blobs/tmp/relstore-abc123")));
  EXPECT_TRUE(fs::exists(d.sub("copy-blobs/tmp/zodb-own-file")));
}

// Kills a history-free conversion part-way (as an operator's ^C or a crash would), then
// resumes it with --incremental; the result equals an uninterrupted conversion.
TEST(Convert, AnInterruptedHistoryFreeConversionResumes) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 40000);
  const std::string dst = "sqlite://" + d.sub("resumed") + "?history=free";
  // Wait until some batches have landed, then kill it.
  testing::convert_killed_when(
      src, dst,
      [&] {
        StorageOptions o;
        o.read_only = true;
        o.create = false;
        return open_storage(StorageUri::parse(dst), o)->info().objects > 2000;
      },
      std::chrono::milliseconds(5), std::chrono::milliseconds(2000));
  const auto partial = open_storage(dst)->info().objects;
  EXPECT_GT(partial, 0u);

  const auto r = run(src, dst, [](ConvertOptions& o) {
    o.incremental = true;
    o.batch_records = 500;
  });
  EXPECT_TRUE(r.started_after || partial == 0);
  const std::string straight = "sqlite://" + d.sub("straight") + "?history=free";
  run(src, straight);
  EXPECT_EQ(testing::storage_differences(straight, dst), std::vector<std::string>{});
  EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});
}

TEST(Convert, AnInCommitMirrorOnTheDestinationIsCaughtUp) {
  TempDir d;
  const std::string path = sample_file(d, 300);
  const std::string dst = "sqlite://" + d.sub("mirrored");
  open_storage(dst)->close();
  mirror_enable(dst, MirrorMode::in_commit);
  const auto r = run("file://" + path, dst);
  EXPECT_GT(r.mirror_rows, 0u);
  const MirrorStatus s = mirror_status(dst);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.rows + s.undecodable, open_storage(dst)->len());
}

// An error once every transaction is in (here the verification's, the destination's blob
// directory gone) says the copy is whole and how to finish: it came out bare, leaving the
// user to guess.
// The advice names the options of the resume: those of this run, but --clear (which
// excludes --incremental).
TEST(Convert, AnErrorAfterTheCopySaysEveryTransactionIsIn) {
  TempDir d;
  const std::string path = sample_file(d, 300);
  const std::string dst = "file://" + d.sub("copy.fs");
  try {
    run("file://" + path, dst, [&](ConvertOptions& o) {
      o.clear = true;
      o.verify = true;
      o.destination_blob_dir = d.sub("blobs");
      o.on_progress = [&](const ConvertProgress&) { std::filesystem::remove_all(d.sub("blobs")); };
    });
    FAIL() << "verified without its blob directory";
  } catch (const StorageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("this came after the copy"), std::string::npos) << what;
    EXPECT_NE(what.find("holds every transaction of the source up to 0x"), std::string::npos)
        << what;
    EXPECT_NE(what.find("--incremental --verify` with the same arguments but --clear"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(open_storage(dst)->len(), open_storage("file://" + path)->len());
}

// A blob record is one whose class pickle names ZODB.blob.Blob (protocol 3 GLOBAL, protocol
// 4 STACK_GLOBAL); an object whose state references a blob within its first bytes is not.
TEST(Convert, BlobRecordsAreKnownByTheirClassPickle) {
  using namespace std::string_literals;
  const std::string state = "\x80\x03N."s;
  EXPECT_TRUE(
      is_blob_record("\x80\x03"
                     "cZODB.blob\nBlob\nq\x00."s +
                     state));
  EXPECT_TRUE(
      is_blob_record("\x80\x04\x8c\x09ZODB.blob\x94\x8c\x04"
                     "Blob\x94\x93\x94."s +
                     state));
  const std::string refers_to_a_blob =
      "\x80\x03"
      "cm\nF\nq\x00.\x80\x03}q\x01X\x01\x00\x00\x00"
      "bq\x02"
      "C\x08\x00\x00\x00\x00\x00\x00\x00\x05"
      "cZODB.blob\nBlob\nq\x03\x86q\x04Qs."s;
  ASSERT_NE(refers_to_a_blob.substr(0, 64).find("ZODB.blob\nBlob\n"), std::string::npos);
  EXPECT_FALSE(is_blob_record(refers_to_a_blob));
  EXPECT_FALSE(
      is_blob_record("\x80\x03"
                     "cZODB.blob\nBlobStorage\nq\x00."s +
                     state));
  EXPECT_FALSE(is_blob_record("not a pickle, though it says ZODB.blob\nBlob\n"));
}

TEST(Convert, SameSourceAndDestinationIsRefused) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 10);
  EXPECT_THROW(run(src, src), ConfigError);
}

void clear(ConvertOptions& o) { o.clear = true; }

void incremental(ConvertOptions& o) { o.incremental = true; }

// A conversion that stops part-way leaves a note in the destination, which `relstore
// info` shows, until a resume has every transaction in; a zap forgets it. The copy used
// to look like a whole database once the convert command's own message was gone.
TEST(Convert, AnUnfinishedCopySaysSoUntilItIsResumed) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 300);
  std::vector<std::string> legs = {"file://" + d.sub("copy.fs")};
  for (bool hp : {true, false}) {
    for (const std::string& leg : database_legs(d, "note", hp)) legs.push_back(leg);
  }
  for (const std::string& dst : legs) {
    SCOPED_TRACE(dst);
    const auto failing = [](ConvertOptions& o) {
      o.clear = true;
      o.batch_records = 100;
      o.on_progress = [](const ConvertProgress& p) {
        if (p.transactions > 0) throw StorageError("the network went away");
      };
    };
    // The servers' test databases may predate the table (MySQL and SQLite databases are
    // migrated on demand); without it a run says so and marks nothing.
    if (dst.rfind("file:", 0) != 0) migrate_up(dst, false);
    EXPECT_THROW(run(src, dst, failing), StorageError);
    const StorageInfo part = open_storage(dst)->info();
    EXPECT_GT(part.transactions, 0u);
    ASSERT_TRUE(part.unfinished_conversion.has_value());
    EXPECT_EQ(part.unfinished_conversion->source, src);
    EXPECT_EQ(part.unfinished_conversion->started_at.size(), 20u)
        << part.unfinished_conversion->started_at;
    EXPECT_NE(format_info(part, dst, false).find("INCOMPLETE    a conversion from " + src),
              std::string::npos);
    try {
      run(src, dst);
      ADD_FAILURE() << "converted into a partial copy without --incremental";
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("it holds an unfinished conversion from " + src),
                std::string::npos)
          << e.what();
    }
    run(src, dst, incremental);
    EXPECT_FALSE(open_storage(dst)->info().unfinished_conversion.has_value());
    EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});

    EXPECT_THROW(run(src, dst, failing), StorageError);
    auto st = open_storage(dst.rfind("file:", 0) == 0 ? dst + "?write=1" : dst);
    ASSERT_TRUE(st->info().unfinished_conversion.has_value());
    st->zap_all();
    EXPECT_FALSE(st->info().unfinished_conversion.has_value());
  }
}

// A destination made before the table existed (migrated on demand) still converts; the
// run says it cannot mark an interruption there.
TEST(Convert, ADestinationWithoutTheNoteTableConvertsAndSaysSo) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 50);
  const std::string dst = "sqlite://" + d.sub("old");
  open_storage(dst)->close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(d.sub("old/main.sqlite3").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE relstore_conversion; DELETE FROM relstore_schema WHERE "
                         "name = 'unfinished_conversion'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::vector<std::string> log;
  run(src, dst,
      [&](ConvertOptions& o) { o.on_log = [&](const std::string& line) { log.push_back(line); }; });
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("no relstore_conversion table"), std::string::npos) << log[0];
  EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});
}

std::string sample_at(const TempDir& d, const std::string& name, uint64_t seed, Tid start) {
  SampleOptions o;
  o.objects = 10;
  o.seed = seed;
  o.start_tid = start;
  write_sample("file://" + d.sub(name), o);
  return "file://" + d.sub(name);
}

// --incremental continues a copy of the source: a destination that ends with a transaction
// the source lacks, or one later than the source's last, is refused and left alone.
TEST(Convert, IncrementalRefusesADestinationThatIsNoCopyOfTheSource) {
  TempDir d;
  const std::string early = sample_at(d, "early.fs", 1, TimeStamp(2024, 1, 1, 0, 0, 0).tid());
  const std::string other = sample_at(d, "other.fs", 2, TimeStamp(2024, 6, 1, 0, 0, 0).tid());
  const std::string late = sample_at(d, "late.fs", 3, TimeStamp(2025, 1, 1, 0, 0, 0).tid());
  const std::string db = "sqlite://" + d.sub("db") + "?history=preserving";
  run(other, db);
  const StorageInfo before = open_storage(db)->info();
  for (const std::string& source : {early, late}) {
    try {
      run(source, db, incremental);
      ADD_FAILURE() << "continued a copy of another database from " << source;
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("not a partial copy of this source"), std::string::npos)
          << e.what();
    }
    const StorageInfo after = open_storage(db)->info();
    EXPECT_EQ(after.transactions, before.transactions);
    EXPECT_EQ(after.last_tid, before.last_tid);
  }
  // Its own source continues (nothing new here).
  EXPECT_EQ(run(other, db, incremental).done.transactions, 0u);
}

// The same TID is not the same transaction (databases made the same way share TIDs): a
// destination whose last transaction differs from the source's of that TID is no copy of
// it, and --incremental went on as if it were.
TEST(Convert, IncrementalRefusesALastTransactionThatDiffersFromTheSources) {
  TempDir d;
  const std::string src = sample_at(d, "src.fs", 2, TimeStamp(2024, 6, 1, 0, 0, 0).tid());
  for (const char* mode : {"hp", "hf"}) {
    SCOPED_TRACE(mode);
    const bool hp = std::string(mode) == "hp";
    const std::string db = "sqlite://" + d.sub(mode) + (hp ? "" : "?history=free");
    run(src, db);
    const StorageInfo before = open_storage(db)->info();
    sqlite3* conn = nullptr;
    ASSERT_EQ(sqlite3_open(d.sub(std::string(mode) + "/main.sqlite3").c_str(), &conn), SQLITE_OK);
    const std::string last = std::to_string(before.last_tid.sql());
    const std::string sql =
        hp ? "UPDATE \"transaction\" SET description = X'6f74686572' WHERE tid = " + last
           : "UPDATE object_state SET state = X'6f74686572', state_size = 5 WHERE tid = " + last;
    ASSERT_EQ(sqlite3_exec(conn, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(conn);
    try {
      run(src, db, incremental);
      ADD_FAILURE() << "continued a copy whose last transaction differs";
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("differs from the source's transaction of that TID"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(open_storage(db)->info().last_tid, before.last_tid);
  }
}

// A pack of the source since the copy (RelStorage's zodbpack on a shared database) marks
// the copy's last transaction packed and removes its revisions a later one replaced; the
// copy is still one, and --incremental goes on from it.
TEST(Convert, IncrementalContinuesAfterTheSourceWasPacked) {
  TempDir d;
  const std::string src = "sqlite://" + d.sub("src");
  run(sample_at(d, "sample.fs", 2, TimeStamp(2024, 6, 1, 0, 0, 0).tid()), src);
  for (const char* mode : {"hp", "hf"}) {
    SCOPED_TRACE(mode);
    run(src, "sqlite://" + d.sub(mode) + (std::string(mode) == "hp" ? "" : "?history=free"));
  }
  auto inst = open_storage(src)->new_instance();
  const Tid copied = inst->last_transaction();
  TransactionRecord last;
  ASSERT_TRUE(inst->iterator(copied, copied)->next(last));
  ASSERT_FALSE(last.records.empty());
  const Oid replaced = last.records.front().oid;
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(replaced, copied, "written after the copy", txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
  inst.reset();
  sqlite3* conn = nullptr;
  ASSERT_EQ(sqlite3_open(d.sub("src/main.sqlite3").c_str(), &conn), SQLITE_OK);
  const std::string pack =
      "UPDATE \"transaction\" SET packed = 1 WHERE tid <= " + std::to_string(copied.sql()) +
      "; DELETE FROM object_state WHERE zoid = " + std::to_string(replaced.value()) +
      " AND tid = " + std::to_string(copied.sql());
  ASSERT_EQ(sqlite3_exec(conn, pack.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(conn);
  for (const char* mode : {"hp", "hf"}) {
    SCOPED_TRACE(mode);
    const std::string db =
        "sqlite://" + d.sub(mode) + (std::string(mode) == "hp" ? "" : "?history=free");
    EXPECT_EQ(run(src, db, incremental).done.transactions, 1u);
    EXPECT_EQ(open_storage(db)->new_instance()->load(replaced).data, "written after the copy");
  }
}

// A history-free SQLite database in `d` holding `objects` sample objects.
std::string history_free_sample(const TempDir& d, uint64_t objects) {
  const std::string uri = "sqlite://" + d.sub("src") + "?history=free";
  SampleOptions sample;
  sample.objects = objects;
  write_sample(uri, sample);
  return uri;
}

// A history-free source keeps no trace of what it deleted: --incremental finds the objects
// a copy has and the source lacks, and removes them from a history-free copy; a
// history-preserving copy, which could not say when they went, is refused and left alone.
// (The deletions used to be skipped without a word.)
TEST(Convert, IncrementalFromAHistoryFreeSourceBringsItsDeletionsOver) {
  TempDir d;
  const std::string src = history_free_sample(d, 300);
  std::vector<std::string> copies = {"sqlite://" + d.sub("hf") + "?history=free"};
  for (const std::string& leg : server_legs(false)) copies.push_back(leg);
  const std::string history = "sqlite://" + d.sub("hp") + "?history=preserving";
  for (const std::string& copy : copies) run(src, copy, clear);
  run(src, history);
  const StorageInfo history_before = open_storage(history)->info();

  testing::update_and_delete_some(src);  // deletes 30-34 among updates
  {
    auto inst = open_storage(src)->new_instance();  // and 40 alone, the last transaction
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->delete_object(Oid(40), inst->load(Oid(40)).tid, txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  for (const std::string& copy : copies) {
    SCOPED_TRACE(copy);
    EXPECT_EQ(run(src, copy,
                  [](ConvertOptions& o) {
                    o.incremental = true;
                    o.dry_run = true;
                  })
                  .deletions,
              6u);
    EXPECT_EQ(run(src, copy, incremental).deletions, 6u);
    EXPECT_EQ(testing::storage_differences(src, copy), std::vector<std::string>{});
    EXPECT_THROW(open_storage(copy)->new_instance()->load(Oid(40)), POSKeyError);
    EXPECT_EQ(run(src, copy, incremental).deletions, 0u);  // nothing left to find
  }
  try {
    run(src, history, incremental);
    ADD_FAILURE() << "a history-preserving copy took deletions it cannot date";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("6 objects (oid " + Oid(30).hex() + " first)"),
              std::string::npos)
        << e.what();
  }
  const StorageInfo history_after = open_storage(history)->info();
  EXPECT_EQ(history_after.transactions, history_before.transactions);
  EXPECT_EQ(history_after.objects, history_before.objects);
}

// The deletions are removed after the copy: a run interrupted in the middle of the copy
// resumes before the transactions it did not copy (removing them first moved the
// destination's last TID past those transactions, and the resume skipped them).
TEST(Convert, AnInterruptedIncrementalRunWithDeletionsResumesWhole) {
  TempDir d;
  const std::string src = history_free_sample(d, 300);
  const std::string copy = "sqlite://" + d.sub("copy") + "?history=free";
  run(src, copy);
  {
    auto inst = open_storage(src)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(400), std::nullopt, "written after the copy", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  testing::update_and_delete_some(src);
  ConvertOptions o;
  o.source = src;
  o.destination = copy;
  o.incremental = true;
  o.batch_records = 1;
  o.on_progress = [](const ConvertProgress&) { throw std::runtime_error("interrupted"); };
  EXPECT_THROW(convert(o), std::runtime_error);
  o.on_progress = nullptr;
  const ConvertReport resumed = convert(o);
  EXPECT_EQ(resumed.deletions, 5u);
  EXPECT_EQ(testing::storage_differences(src, copy), std::vector<std::string>{});
  EXPECT_EQ(open_storage(copy)->new_instance()->load(Oid(400)).data, "written after the copy");
}

// Interrupted after copying transactions later than the deletions (the removals come at
// the end of a run): the resume still removes them, though the destination's last
// transaction is past them by then.
TEST(Convert, DeletionsSurviveAnInterruptionPastThem) {
  TempDir d;
  const std::string src = history_free_sample(d, 300);
  const std::string copy = "sqlite://" + d.sub("copy") + "?history=free";
  run(src, copy);
  testing::update_and_delete_some(src);
  for (uint64_t oid : {400, 401}) {
    auto inst = open_storage(src)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(oid), std::nullopt, "written after the deletions", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  ConvertOptions o;
  o.source = src;
  o.destination = copy;
  o.incremental = true;
  o.batch_records = 1;
  int batches = 0;
  o.on_progress = [&](const ConvertProgress&) {
    if (++batches == 3) throw std::runtime_error("interrupted");
  };
  EXPECT_THROW(convert(o), std::runtime_error);
  o.on_progress = nullptr;
  const ConvertReport resumed = convert(o);
  EXPECT_EQ(resumed.deletions, 5u);
  EXPECT_EQ(testing::storage_differences(src, copy), std::vector<std::string>{});
}

// A commit of one new object to `uri`, as an application beside a conversion makes it.
void commit_as_another_writer(const std::string& uri) {
  auto inst = open_storage(uri)->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  inst->store(inst->new_oid(), std::nullopt, "another writer", txn);
  inst->tpc_vote(txn);
  inst->tpc_finish(txn);
}

void expect_stopped_by_another_writer(const ConvertOptions& o) {
  try {
    convert(o);
    ADD_FAILURE() << "the conversion went on after another process wrote";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("another process wrote to the destination"),
              std::string::npos)
        << e.what();
  }
}

// A conversion is the only writer of its destination: another process's commit between
// two batches stops it with an error saying so, instead of being overwritten while the
// copy passes for a faithful one; a second conversion into the same destination waits
// for the first and then finds it changed.
TEST(Convert, AnotherWriterOfTheDestinationStopsTheConversion) {
  TempDir d;
  const std::string path = sample_file(d, 2000);
  const std::string dst = "sqlite://" + d.sub("db");
  ConvertOptions o;
  o.source = "file://" + path;
  o.destination = dst;
  o.batch_records = 200;
  bool wrote = false;
  o.on_progress = [&](const ConvertProgress&) {
    if (wrote) return;
    wrote = true;
    commit_as_another_writer(dst);
  };
  expect_stopped_by_another_writer(o);
}

// The removals of a history-free source's deletions come after a walk of both sides'
// OIDs, which can take long: a commit to the destination meanwhile (whose new object the
// walk may take for deleted) stops the run before anything is removed.
TEST(Convert, AWriterDuringTheDeletionWalkStopsTheRemovals) {
  TempDir d;
  const std::string src = history_free_sample(d, 300);
  const std::string copy = "sqlite://" + d.sub("copy") + "?history=free";
  run(src, copy);
  testing::update_and_delete_some(src);  // deletes 30-34
  ConvertOptions o;
  o.source = src;
  o.destination = copy;
  o.incremental = true;
  o.on_log = [&](const std::string& line) {
    if (line.rfind("removing ", 0) == 0) commit_as_another_writer(copy);
  };
  expect_stopped_by_another_writer(o);
  EXPECT_NO_THROW(open_storage(copy)->new_instance()->load(Oid(30))) << "an object was removed";
}

// Two conversions into one empty destination at once: the second waits for the first's
// lock and then finds the destination changed; one copy results, not a merge of two.
TEST(Convert, TwoConversionsIntoOneDestinationDoNotMerge) {
  TempDir d;
  const std::string a = "file://" + sample_file(d, 1500, "a.fs");
  SampleOptions other;
  other.objects = 1500;
  other.seed = 8;
  const std::string b = "file://" + d.sub("b.fs");
  write_sample(b, other);
  const std::string dst = "sqlite://" + d.sub("db");
  open_storage(dst)->close();
  std::string errors[2];
  const auto one = [&](const std::string& src, std::string& error) {
    try {
      run(src, dst, [](ConvertOptions& o) { o.batch_records = 100; });
    } catch (const StorageError& e) {
      error = e.what();
    }
  };
  std::thread first(one, a, std::ref(errors[0]));
  std::thread second(one, b, std::ref(errors[1]));
  first.join();
  second.join();
  ASSERT_EQ(errors[0].empty() + errors[1].empty(), 1) << errors[0] << " | " << errors[1];
  const std::string& winner = errors[0].empty() ? a : b;
  EXPECT_EQ(testing::storage_differences(winner, dst), std::vector<std::string>{});
}

// Between two history-preserving databases --verify compares which revision is current
// too (current_object): equal histories with a wrong pointer read old states.
TEST(Convert, VerifyComparesTheCurrentRevisions) {
  TempDir d;
  const std::string src = "sqlite://" + d.sub("src");
  SampleOptions so;
  so.objects = 200;
  write_sample(src, so);
  const Tid first = open_storage(src)->new_instance()->load(Oid(10)).tid;
  testing::update_and_delete_some(src);
  const std::string dst = "sqlite://" + d.sub("dst");
  run(src, dst);
  EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(d.sub("dst/main.sqlite3").c_str(), &db), SQLITE_OK);
  const std::string sql =
      "UPDATE current_object SET tid = " + std::to_string(first.sql()) + " WHERE zoid = 10";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto diffs = testing::storage_differences(src, dst);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_NE(diffs[0].find("current revision of oid 0x000000000000000a: serial"), std::string::npos)
      << diffs[0];
}

// --verify compares the copy with the source as the copy saw it: a source that committed
// meanwhile (a change of a copied object, a new one) is compared up to the copy's last
// transaction, and the report says so. Every such copy failed its verification.
TEST(Convert, VerifyLeavesOutWhatTheSourceCommittedAfterTheCopy) {
  for (const char* mode : {"", "?history=free"}) {
    SCOPED_TRACE(mode);
    TempDir d;
    const std::string src = "sqlite://" + d.sub("src");
    SampleOptions so;
    so.objects = 200;
    write_sample(src, so);
    const std::string dst = "sqlite://" + d.sub("dst") + mode;
    bool wrote = false;
    const ConvertReport r = run(src, dst, [&](ConvertOptions& o) {
      o.verify = true;
      o.batch_records = 100;
      o.on_progress = [&](const ConvertProgress&) {
        if (wrote) return;
        wrote = true;
        commit_as_another_writer(src);
        auto inst = open_storage(src)->new_instance();
        const Tid serial = inst->load(Oid(10)).tid;
        TransactionMetaData txn{"", "", ""};
        inst->tpc_begin(txn);
        inst->store(Oid(10), serial, inst->load(Oid(11)).data, txn);
        inst->tpc_vote(txn);
        inst->tpc_finish(txn);
      };
    });
    ASSERT_TRUE(wrote);
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.differences, std::vector<std::string>{});
    ASSERT_TRUE(r.source_moved_to.has_value());
    EXPECT_GT(*r.source_moved_to, *r.last_tid);
  }
}

// A history-free source whose last transaction deleted an object: its last TID is that
// deletion's, which no copied transaction carries (the copy derives transactions from
// current rows). --verify took it for a commit after the copy and said so.
TEST(Convert, VerifyOfAHistoryFreeSourceEndingWithADeletionSaysNothingMoved) {
  TempDir d;
  const std::string src = history_free_sample(d, 100);
  {
    auto inst = open_storage(src)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->delete_object(Oid(40), inst->load(Oid(40)).tid, txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  for (const char* mode : {"?history=free", "?history=preserving"}) {
    SCOPED_TRACE(mode);
    const ConvertReport r = run(src, "sqlite://" + d.sub(std::string("dst") + mode[9]) + mode,
                                [](ConvertOptions& o) { o.verify = true; });
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.differences, std::vector<std::string>{});
    EXPECT_FALSE(r.source_moved_to.has_value()) << r.source_moved_to->hex();
  }
}

// A stop that comes once every transaction is in (Ctrl-C during --verify, which can take
// longer than the copy) ends the run there: it was ignored until the verification was over.
// The report says the copy is complete and unverified.
TEST(Convert, AStopAfterTheCopyEndsTheVerification) {
  TempDir d;
  const std::string src = "file://" + sample_file(d, 300);
  std::atomic<bool> stop{false};
  ConvertOptions o;
  o.source = src;
  o.destination = "sqlite://" + d.sub("dst");
  o.verify = true;
  o.stop = &stop;
  o.on_progress = [&](const ConvertProgress& p) {
    if (p.transactions == p.total_transactions) stop = true;  // the last batch has landed
  };
  const ConvertReport r = convert(o);
  EXPECT_FALSE(r.interrupted);
  EXPECT_TRUE(r.interrupted_after_copy);
  EXPECT_FALSE(r.verified);
  EXPECT_TRUE(r.differences.empty());
  EXPECT_EQ(testing::storage_differences(src, o.destination), std::vector<std::string>{});
  // The comparison itself ends at once when asked to.
  SampleOptions other;
  other.objects = 20;
  other.seed = 8;
  write_sample("sqlite://" + d.sub("other"), other);
  auto a = open_storage(src);
  auto b = open_storage("sqlite://" + d.sub("other"));
  EXPECT_FALSE(compare_storages(*a, *b).empty());
  bool complete = true;
  EXPECT_TRUE(compare_storages(*a, *b, 20, nullptr, nullptr, &stop, &complete).empty());
  EXPECT_FALSE(complete);
  stop = false;
  EXPECT_FALSE(compare_storages(*a, *b, 20, nullptr, nullptr, &stop, &complete).empty());
  EXPECT_TRUE(complete);
}

// From a history-free source, a destination whose last transaction another writer made is
// no partial copy: --incremental refuses it (it copied only what the source did after that
// foreign commit, and skipped the rest).
TEST(Convert, IncrementalFromAHistoryFreeSourceRefusesAForeignLastCommit) {
  TempDir d;
  const std::string src = history_free_sample(d, 200);
  const std::string copy = "sqlite://" + d.sub("copy") + "?history=free";
  run(src, copy);
  const auto write = [](const std::string& uri, std::optional<uint64_t> oid) {
    auto inst = open_storage(uri)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    const Oid target = oid ? Oid(*oid) : inst->new_oid();
    std::optional<Tid> serial;
    try {
      serial = inst->load(target).tid;
    } catch (const POSKeyError&) {
    }
    inst->store(target, serial, "changed", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  };
  write(src, 5);              // the source changes
  write(copy, std::nullopt);  // another writer commits to the copy
  write(src, 6);              // the source changes again
  try {
    run(src, copy, [](ConvertOptions& o) { o.incremental = true; });
    ADD_FAILURE() << "resumed";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("absent from the source"), std::string::npos) << e.what();
  }
}

// The walk that finds them reads pages of records: deletions on several pages, and
// objects past 2**63, are all found.
TEST(Convert, DeletionsAreFoundOnEveryPageOfTheWalk) {
  TempDir d;
  const std::string src = history_free_sample(d, 2500);
  constexpr uint64_t kHigh = uint64_t{1} << 63;
  auto write = [&](const std::vector<std::pair<uint64_t, std::optional<std::string>>>& records) {
    auto inst = open_storage(src)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    for (const auto& [oid, data] : records) {
      if (data) {
        inst->store(Oid(oid), std::nullopt, *data, txn);
      } else {
        inst->delete_object(Oid(oid), inst->load(Oid(oid)).tid, txn);
      }
    }
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  };
  write({{kHigh + 1, std::string("high")}, {kHigh + 2, std::string("high too")}});
  const std::string copy = "sqlite://" + d.sub("copy") + "?history=free";
  run(src, copy);
  write({{7, std::nullopt}, {1500, std::nullopt}, {2400, std::nullopt}, {kHigh + 1, std::nullopt}});
  EXPECT_EQ(run(src, copy, incremental).deletions, 4u);
  EXPECT_EQ(testing::storage_differences(src, copy), std::vector<std::string>{});
  EXPECT_EQ(open_storage(copy)->new_instance()->load(Oid(kHigh + 2)).data, "high too");
}

// One database under two names: --clear would empty the source before copying it.
TEST(Convert, TheSameDatabaseUnderAnotherNameIsRefusedAndKept) {
  TempDir d;
  const std::string path = sample_file(d, 10);
  fs::create_symlink(path, d.sub("link.fs"));
  const auto size = fs::file_size(path);
  std::ofstream(path + ".index") << "an index ZODB would use";
  for (const std::string& other :
       {"file://" + d.str() + "/./Data.fs", "file://" + d.sub("link.fs")}) {
    EXPECT_THROW(run("file://" + path, other, clear), ConfigError) << other;
    EXPECT_EQ(fs::file_size(path), size) << other;
    // Not opened for writing either (that removes a stale index).
    EXPECT_TRUE(fs::exists(path + ".index")) << other;
  }
  const std::string db = "sqlite://" + d.sub("db");
  run("file://" + path, db);
  const uint64_t objects = open_storage(db)->len();
  EXPECT_THROW(run(db, db + "/", clear), ConfigError);
  EXPECT_EQ(open_storage(db)->len(), objects);

  // A server reached under another spelling of its address.
  for (Scheme scheme : {Scheme::postgresql, Scheme::mysql}) {
    if (!testing::server_base_uri(scheme)) {
      if (testing::server_required(scheme)) ADD_FAILURE() << "a required server is not configured";
      continue;
    }
    const std::string uri = testing::server_database_uri(scheme, "_convert_same", false);
    run("file://" + path, uri, clear);
    std::string alias = uri;
    const auto at = alias.find("@127.0.0.1:");
    ASSERT_NE(at, std::string::npos) << "the test expects the server at 127.0.0.1: " << uri;
    alias.replace(at, 10, "@127.1");
    EXPECT_THROW(run(uri, alias, clear), ConfigError) << alias;
    EXPECT_EQ(open_storage(uri)->len(), objects) << uri;
  }
}

// Options that cannot work are refused before --clear has emptied anything.
TEST(Convert, AnImpossibleOptionWithClearLeavesTheDestinationAlone) {
  TempDir d;
  const std::string path = sample_file(d, 10);
  const std::string db = "sqlite://" + d.sub("db");
  run("file://" + path, db);
  const uint64_t objects = open_storage(db)->len();
  // A source blob directory that does not exist.
  EXPECT_THROW(run("file://" + path, db,
                   [&](ConvertOptions& o) {
                     o.clear = true;
                     o.source_blob_dir = d.sub("blobs");
                   }),
               StorageError);
  EXPECT_EQ(open_storage(db)->len(), objects);
  EXPECT_FALSE(fs::exists(d.sub("blobs")));
  // Nor is a destination that does not exist yet created.
  EXPECT_THROW(run("file://" + path, "sqlite://" + d.sub("new"),
                   [&](ConvertOptions& o) { o.source_blob_dir = d.sub("blobs"); }),
               StorageError);
  EXPECT_FALSE(fs::exists(d.sub("new")));
}

// A bulk batch checks, under the destination's commit lock, that the destination still
// ends where the conversion left it: a commit by another process in the moment between
// convert's check and the batch used to be found only after the batch had landed behind
// it (older TIDs after a newer one, which polls never report).
TEST(Convert, ABulkBatchWritesNothingOnceAnotherProcessCommitted) {
  TempDir d;
  for (const bool hp : {false, true}) {
    for (const auto& uri_text : database_legs(d, "moved", hp)) {
      const StorageUri uri = StorageUri::parse(uri_text);
      SCOPED_TRACE(uri.redacted());
      auto st = open_storage(uri_text);
      st->zap_all();
      auto inst = st->new_instance();
      TransactionMetaData meta{"", "", ""};
      inst->tpc_begin(meta);
      inst->store(Oid(1), std::nullopt, "another process's commit", meta);
      inst->tpc_vote(meta);
      const Tid foreign = inst->tpc_finish(meta);
      auto adapter = backend::open_adapter(uri, uri.options());
      ASSERT_TRUE(adapter->supports_bulk());
      const Tid batch_tid(foreign.value() - 10);  // a source TID, older than the commit
      const Tid expected(foreign.value() - 20);   // where convert had seen the destination
      auto write = [&](std::optional<Tid> expected_last) {
        if (hp) {
          TransactionRecord t;
          t.tid = batch_tid;
          t.records.push_back({Oid(2), batch_tid, std::string("batch"), std::nullopt});
          adapter->bulk_restore(std::vector<TransactionRecord>{t}, expected_last);
        } else {
          adapter->bulk_apply_current(
              std::vector<backend::BulkRecord>{{Oid(2), batch_tid, std::string("batch")}},
              expected_last);
        }
      };
      try {
        write(expected);
        ADD_FAILURE() << "the batch landed behind another process's commit";
      } catch (const StorageError& e) {
        EXPECT_NE(std::string(e.what()).find("another process committed"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find(foreign.hex()), std::string::npos) << e.what();
      }
      adapter->bulk_finish();
      auto reader = st->new_instance();
      reader->poll_invalidations();
      EXPECT_THROW(reader->load(Oid(2)), POSKeyError);
      // Where the destination really stands, the batch goes in.
      write(foreign);
      adapter->bulk_finish();
      reader->poll_invalidations();
      EXPECT_EQ(reader->load(Oid(2)).data, "batch");
    }
  }
}

// A commit between its vote and its finish holds its objects' locks and then waits for the
// commit lock. What takes the commit lock and writes object rows (zap_all, a bulk batch)
// must not take it first and then wait for those rows: PostgreSQL's deadlock detector
// failed one side of that cycle, the voter's finish among them.
TEST(Convert, AZapOrABulkBatchWaitsForAVotedCommitWithoutADeadlock) {
  TempDir d;
  for (const bool hp : {false, true}) {
    for (const auto& uri_text : database_legs(d, "voted", hp)) {
      const StorageUri uri = StorageUri::parse(uri_text);
      SCOPED_TRACE(uri.redacted());
      for (const bool zap : {false, true}) {
        SCOPED_TRACE(zap ? "zap_all" : "bulk batch");
        auto st = open_storage(uri_text + "&commit_lock_timeout=20");
        st->zap_all();
        auto voter = st->new_instance();
        TransactionMetaData create{"", "", ""};
        voter->tpc_begin(create);
        voter->store(Oid(1), std::nullopt, "v1", create);
        voter->tpc_vote(create);
        const Tid t1 = voter->tpc_finish(create);
        TransactionMetaData txn{"", "", ""};
        voter->tpc_begin(txn);
        voter->store(Oid(1), t1, "v2", txn);
        voter->tpc_vote(txn);
        auto adapter = backend::open_adapter(uri, uri.options());
        auto other = std::async(std::launch::async, [&] {
          if (zap) {
            open_storage(uri_text + "&commit_lock_timeout=20")->zap_all();
          } else if (hp) {
            TransactionRecord t;
            t.tid = Tid(t1.value() + 1000);
            t.records.push_back({Oid(1), t.tid, std::string("batch"), std::nullopt});
            adapter->bulk_restore(std::vector<TransactionRecord>{t}, t1);
          } else {
            adapter->bulk_apply_current(
                std::vector<backend::BulkRecord>{{Oid(1), Tid(t1.value() + 1000), "batch"}}, t1);
          }
        });
        // Longer than PostgreSQL's deadlock_timeout (1 s), in which a cycle is found.
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        EXPECT_NO_THROW(voter->tpc_finish(txn));
        if (zap) {
          EXPECT_NO_THROW(other.get());
        } else {
          // The batch then finds the voter's commit where it expected t1.
          try {
            other.get();
            ADD_FAILURE() << "the batch landed after another process's commit";
          } catch (const StorageError& e) {
            EXPECT_NE(std::string(e.what()).find("another process committed"), std::string::npos)
                << e.what();
          }
        }
        adapter->bulk_finish();
      }
    }
  }
}

// A file named as the destination that is no Data.fs is not cleared, and the error says
// what it is (it spoke of Python 2 and 3 pickles, reading any 4 bytes as a magic).
TEST(Convert, AFileThatIsNoFileStorageIsNotCleared) {
  TempDir d;
  const std::string path = sample_file(d, 10);
  const std::string notes = d.sub("notes.txt");
  std::ofstream(notes) << "my notes, not a Data.fs";
  try {
    run("file://" + path, "file://" + notes, [](ConvertOptions& o) { o.clear = true; });
    FAIL() << "converted into a text file";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a FileStorage"), std::string::npos) << e.what();
  }
  std::ifstream in(notes);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "my notes, not a Data.fs");
  // Nor one shorter than a magic number.
  std::ofstream(d.sub("short.txt")) << "FS";
  EXPECT_THROW(run("file://" + path, "file://" + d.sub("short.txt"),
                   [](ConvertOptions& o) { o.clear = true; }),
               StorageError);
  EXPECT_EQ(fs::file_size(d.sub("short.txt")), 2u);
}

}  // namespace
}  // namespace relstore
