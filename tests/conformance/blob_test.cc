// Blobs: conformance.md lines 37-38, and line 33's "pack then removes the object and its
// blobs". The database backends keep a blob's content in blob_chunk and cache committed
// contents in the storage's blob directory; each test opens its storage with one, and
// reads through a second storage with an empty cache of its own, so that what it checks
// is what the database holds.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "conformance/fixture.h"
#include "relstore/blob_dir.h"
#include "support/temp_dir.h"

namespace relstore::conformance {
namespace {

namespace fs = std::filesystem;

class Blobs : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    inst_.reset();
    storage_->close();
    storage_ = reopen("blob_dir=" + dirs_.sub("cache"));
    inst_ = storage_->new_instance();
    commit(*inst_, {{0, "root"}});
  }

  // A new file outside the blob directory with `content`, as an application writes one.
  std::string blob_file(const std::string& content) {
    const std::string path = dirs_.sub("upload-" + std::to_string(++files_));
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // Commits blob records: oid -> (serial, content). Returns the TID.
  Tid commit_blobs(const std::map<uint64_t, std::pair<std::optional<Tid>, std::string>>& blobs) {
    TransactionMetaData txn{"", "blobs", ""};
    inst_->tpc_begin(txn);
    for (const auto& [oid, b] : blobs) {
      inst_->store_blob(Oid(oid), b.first, "blob record " + std::to_string(oid),
                        blob_file(b.second), txn);
    }
    inst_->tpc_vote(txn);
    const Tid tid = inst_->tpc_finish(txn);
    inst_->sync();
    return tid;
  }

  // The content of a committed blob as a storage with an empty cache reads it.
  std::string from_database(uint64_t oid, Tid tid) {
    if (!fresh_) {
      fresh_ = reopen("blob_dir=" + dirs_.sub("fresh-" + std::to_string(++caches_)));
      fresh_inst_ = fresh_->new_instance();
    }
    fresh_inst_->sync();
    return read(fresh_inst_->load_blob(Oid(oid), tid));
  }

  // A new empty cache for the next from_database.
  void forget_fresh_cache() {
    fresh_inst_.reset();
    if (fresh_) fresh_->close();
    fresh_.reset();
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Files a commit left in the cache's tmp/ (taken but not committed).
  size_t temporaries() const {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dirs_.sub("cache") + "/tmp", ec)) {
      n += e.path().filename().string().starts_with("relstore-");
    }
    return n;
  }

  void TearDown() override {
    forget_fresh_cache();
    StorageTest::TearDown();
  }

  testing::TempDir dirs_;
  int files_ = 0;
  int caches_ = 0;
  std::unique_ptr<Storage> fresh_;
  std::unique_ptr<StorageInstance> fresh_inst_;
};

using BlobsWithHistory = Blobs;
using BlobsOnFiles = StorageTest;

// Line 37: the storage takes the file; load_blob and open_committed_blob give the content
// by (oid, tid) as a read-only file.
TEST_P(Blobs, StoreBlobTakesTheFileAndLoadBlobGivesItBack) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  const std::string upload = blob_file("the blob's bytes");
  inst_->store_blob(Oid(1), std::nullopt, "record", upload, txn);
  EXPECT_FALSE(fs::exists(upload)) << "the storage takes ownership of the file";
  inst_->tpc_vote(txn);
  const Tid tid = inst_->tpc_finish(txn);
  inst_->sync();

  EXPECT_EQ(inst_->load(Oid(1)).data, "record");
  const std::string path = inst_->load_blob(Oid(1), tid);
  EXPECT_EQ(read(path), "the blob's bytes");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u) << "committed blob files are read-only";
  std::ifstream in = inst_->open_committed_blob(Oid(1), tid);
  std::ostringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "the blob's bytes");
  EXPECT_EQ(from_database(1, tid), "the blob's bytes");
  EXPECT_EQ(temporaries(), 0u);
}

// Line 37: contents of every size come back whole, and an empty blob is a blob. Large
// ones are read in pieces (4 MiB; MySQL stores chunks of 1 MiB, read four at a time).
TEST_P(Blobs, LargeAndEmptyBlobsRoundTrip) {
  std::string large(9'500'003, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>((i * 7919) >> 3);
  const Tid tid = commit_blobs({{1, {std::nullopt, large}}, {2, {std::nullopt, ""}}});
  EXPECT_EQ(from_database(1, tid), large);
  EXPECT_EQ(from_database(2, tid), "");
}

// Line 37: POSKeyError for an object without a blob and for a revision without one.
TEST_P(Blobs, MissingBlobRaisesPOSKeyError) {
  const Tid tid = commit_blobs({{1, {std::nullopt, "b"}}});
  const Tid plain = create(2, "no blob");
  EXPECT_THROW(inst_->load_blob(Oid(2), plain), POSKeyError);
  EXPECT_THROW(inst_->load_blob(Oid(1), plain), POSKeyError);
  EXPECT_THROW(inst_->load_blob(Oid(3), tid), POSKeyError);
}

// Line 37: abort removes what the transaction stored, on the client and in the database.
TEST_P(Blobs, AbortRemovesTheStoredBlobs) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store_blob(Oid(1), std::nullopt, "record", blob_file("aborted"), txn);
  EXPECT_EQ(temporaries(), 1u);
  inst_->tpc_vote(txn);
  inst_->tpc_abort(txn);
  EXPECT_EQ(temporaries(), 0u);
  inst_->sync();
  EXPECT_THROW(inst_->load(Oid(1)), POSKeyError);
  // The next commit on the same pooled connection carries only its own blob.
  const Tid tid = commit_blobs({{2, {std::nullopt, "kept"}}});
  EXPECT_EQ(from_database(2, tid), "kept");
  EXPECT_THROW(from_database(1, tid), POSKeyError);
}

// Line 37: a vote that fails (a conflict) leaves no blob behind once aborted.
TEST_P(Blobs, ConflictingBlobStoreLeavesNothing) {
  const Tid t1 = commit_blobs({{1, {std::nullopt, "one"}}});
  commit_blobs({{1, {t1, "two"}}});
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store_blob(Oid(1), t1, "stale", blob_file("stale"), txn);
  EXPECT_THROW(inst_->tpc_vote(txn), ConflictError);
  inst_->tpc_abort(txn);
  EXPECT_EQ(temporaries(), 0u);
  inst_->sync();
  EXPECT_EQ(read(inst_->load_blob(Oid(1), inst_->load(Oid(1)).tid)), "two");
}

// A store of the same object after store_blob in one transaction replaces the blob record.
TEST_P(Blobs, PlainStoreAfterStoreBlobDropsTheBlob) {
  TransactionMetaData txn{"", "", ""};
  inst_->tpc_begin(txn);
  inst_->store_blob(Oid(1), std::nullopt, "blob record", blob_file("gone"), txn);
  inst_->store(Oid(1), std::nullopt, "plain record", txn);
  EXPECT_EQ(temporaries(), 0u);
  inst_->tpc_vote(txn);
  const Tid tid = inst_->tpc_finish(txn);
  EXPECT_THROW(from_database(1, tid), POSKeyError);
}

// A new revision has its own blob; history-free databases keep only the current one.
TEST_P(Blobs, EachRevisionHasItsBlob) {
  const Tid t1 = commit_blobs({{1, {std::nullopt, "first"}}});
  const Tid t2 = commit_blobs({{1, {t1, "second"}}});
  EXPECT_EQ(from_database(1, t2), "second");
  if (hp()) {
    EXPECT_EQ(from_database(1, t1), "first");
  } else {
    EXPECT_THROW(from_database(1, t1), POSKeyError);
  }
  // The committing storage's cache has both files: a cache never holds a wrong content.
  EXPECT_EQ(read(inst_->load_blob(Oid(1), t1)), "first");
}

// Line 33: a deleted object's blob goes (history-free: at once; history-preserving: when
// a pack removes the object).
TEST_P(Blobs, DeletedObjectLosesItsBlob) {
  const Tid t1 = commit_blobs({{1, {std::nullopt, "doomed"}}});
  const Tid t2 = remove(1, t1);
  if (hp()) {
    EXPECT_EQ(from_database(1, t1), "doomed");
    PackOptions options;
    options.pack_tid = t2;
    options.gc = false;
    EXPECT_EQ(read(inst_->load_blob(Oid(1), t1)), "doomed");  // in the packing storage's cache
    storage_->pack(options);
    forget_fresh_cache();
    // The pack took the removed object's file out of its own storage's cache too.
    inst_->sync();
    EXPECT_THROW(inst_->load_blob(Oid(1), t1), POSKeyError);
  }
  EXPECT_THROW(from_database(1, t1), POSKeyError);
}

// RelStorage's blob-cache-size: past the check's share of the limit, the least recently
// used files go until the directory is under the limit by that share; a file used in the
// last minute stays, and a blob that went is read from the database again.
TEST_P(Blobs, ACacheSizeKeepsTheLeastRecentlyUsedFilesOut) {
  inst_.reset();
  storage_->close();
  const std::string dir = dirs_.sub("small");
  storage_ = reopen("blob_dir=" + dir + "&blob_cache_size=10KB&blob_cache_size_check=50");
  inst_ = storage_->new_instance();
  const auto content = [](uint64_t oid) { return std::string(2000, static_cast<char>('a' + oid)); };
  std::map<uint64_t, Tid> tids;
  for (uint64_t oid = 1; oid <= 5; ++oid)
    tids[oid] = commit_blobs({{oid, {std::nullopt, content(oid)}}});
  // Age the five files (oid 1 the oldest), then use oid 2's: it becomes the newest.
  const auto now = fs::file_time_type::clock::now();
  for (uint64_t oid = 1; oid <= 5; ++oid) {
    fs::last_write_time(inst_->load_blob(Oid(oid), tids[oid]),
                        now - std::chrono::hours(2) + std::chrono::minutes(oid));
  }
  EXPECT_EQ(read(inst_->load_blob(Oid(2), tids[2])), content(2));
  // The sixth file takes the writes since the last check past 5 KB: 12,000 bytes are over
  // the limit of 10,240, so 1, 3, 4 and 5 go (to 4,000, under 5,120); 2 and 6 are in use.
  tids[6] = commit_blobs({{6, {std::nullopt, content(6)}}});
  std::set<uint64_t> cached;
  for (const BlobFile& f : BlobDir::open(dir).list()) cached.insert(f.oid.value());
  EXPECT_EQ(cached, (std::set<uint64_t>{2, 6}));
  for (uint64_t oid = 1; oid <= 6; ++oid) {
    EXPECT_EQ(read(inst_->load_blob(Oid(oid), tids[oid])), content(oid)) << oid;
  }
  EXPECT_EQ(BlobDir::open(dir).list().size(), 6u);  // back from the database
}

TEST_P(Blobs, NeedABlobDirectory) {
  auto plain = reopen();
  auto inst = plain->new_instance();
  TransactionMetaData txn{"", "", ""};
  inst->tpc_begin(txn);
  const std::string upload = blob_file("x");
  try {
    inst->store_blob(Oid(1), std::nullopt, "record", upload, txn);
    ADD_FAILURE() << "store_blob without a blob directory";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("blob_dir"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(upload)) << "a refused file stays the caller's";
  inst->tpc_abort(txn);
  EXPECT_THROW(inst->load_blob(Oid(1), Tid(1)), StorageError);
}

// Line 38: undo brings the earlier revision's blob back, and redo the later one.
TEST_P(BlobsWithHistory, UndoAndRedoOfBlobRevisions) {
  const Tid t1 = commit_blobs({{1, {std::nullopt, "one"}}});
  const Tid t2 = commit_blobs({{1, {t1, "two"}}});
  const auto undo_commit = [&](Tid undone) {
    TransactionMetaData txn{"", "undo", ""};
    inst_->tpc_begin(txn);
    inst_->undo(undo_id(undone), txn);
    inst_->tpc_vote(txn);
    const Tid tid = inst_->tpc_finish(txn);
    inst_->sync();
    return tid;
  };
  const Tid t3 = undo_commit(t2);
  EXPECT_EQ(from_database(1, t3), "one");
  EXPECT_EQ(read(inst_->load_blob(Oid(1), t3)), "one");
  const Tid t4 = undo_commit(t3);
  EXPECT_EQ(from_database(1, t4), "two");
  EXPECT_EQ(temporaries(), 0u);
  // Without a blob directory, an undo that would bring a blob back is refused.
  {
    auto plain = reopen();
    auto inst = plain->new_instance();
    TransactionMetaData txn{"", "undo", ""};
    inst->tpc_begin(txn);
    try {
      inst->undo(undo_id(t4), txn);
      ADD_FAILURE() << "undo of a blob revision without a blob directory";
    } catch (const StorageError& e) {
      EXPECT_NE(std::string(e.what()).find("blob_dir"), std::string::npos) << e.what();
    }
    inst->tpc_abort(txn);
  }
  // A refused undo leaves none of the blobs it had read: object 5's comes back, 6's
  // cannot (its record changed since), and the undo fails as a whole.
  const Tid ta = commit_blobs({{5, {std::nullopt, "five-1"}}});
  const Tid tb = commit_blobs({{5, {ta, "five-2"}}, {6, {std::nullopt, "six-1"}}});
  commit(*inst_, {{6, "another record"}}, {{6, tb}});
  TransactionMetaData txn{"", "undo", ""};
  inst_->tpc_begin(txn);
  EXPECT_THROW(inst_->undo(undo_id(tb), txn), UndoError);
  inst_->tpc_abort(txn);
  EXPECT_EQ(temporaries(), 0u);
}

// Line 38: pack removes exactly the blobs of the revisions it removes.
TEST_P(BlobsWithHistory, PackRemovesOnlyBlobsNoLongerNeeded) {
  const Tid t1 = commit_blobs({{1, {std::nullopt, "old"}}, {2, {std::nullopt, "untouched"}}});
  const Tid t2 = commit_blobs({{1, {t1, "new"}}});
  PackOptions options;
  options.pack_tid = t2;
  options.gc = false;
  const BlobDir cache = BlobDir::open(dirs_.sub("cache"));
  ASSERT_TRUE(cache.has_blob(Oid(1), t1));  // the commits' own files
  storage_->pack(options);
  EXPECT_THROW(from_database(1, t1), POSKeyError);
  EXPECT_EQ(from_database(1, t2), "new");
  EXPECT_EQ(from_database(2, t1), "untouched");
  // The packing storage's cache lost the pruned revision's file, and only that one.
  EXPECT_FALSE(cache.has_blob(Oid(1), t1));
  EXPECT_THROW(inst_->load_blob(Oid(1), t1), POSKeyError);
  EXPECT_TRUE(cache.has_blob(Oid(1), t2));
  EXPECT_TRUE(cache.has_blob(Oid(2), t1));
}

TEST_P(BlobsOnFiles, RefusedWithAClearError) {
  EXPECT_THROW(inst_->load_blob(Oid(1), Tid(1)), StorageError);
  EXPECT_THROW(reopen("blob_dir=/tmp/x"), ConfigError);
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Conformance, Blobs, ::testing::ValuesIn(database_backends()),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Conformance, BlobsWithHistory,
                         ::testing::ValuesIn(database_backends(true)), backend_name);
INSTANTIATE_TEST_SUITE_P(Conformance, BlobsOnFiles, ::testing::ValuesIn(file_backends()),
                         backend_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Blobs);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BlobsWithHistory);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BlobsOnFiles);

}  // namespace relstore::conformance
