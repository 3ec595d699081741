// A value SQLite refuses to bind (longer than SQLITE_LIMIT_LENGTH, 1e9 bytes by default)
// was left NULL, and a NULL state in object_state means a deleted object: a commit or a
// conversion reported success and the object was gone. Such a state must fail the vote or
// the batch, naming the object, and leave nothing behind.
//
// The tests lower the limit on every connection the process opens (an auto-extension runs
// on each new connection), so that a state of a few hundred kilobytes is "too big".
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "adapters/sqlite/store_connection.h"
#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/storage.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

constexpr int kLimit = 100'000;

int lower_limit(sqlite3* db, const char**, const sqlite3_api_routines*) {
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kLimit);
  return SQLITE_OK;
}

// Lowers the limit for connections opened while it lives.
class LowLengthLimit {
 public:
  LowLengthLimit() { sqlite3_auto_extension(reinterpret_cast<void (*)()>(lower_limit)); }
  ~LowLengthLimit() { sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(lower_limit)); }
};

void expect_names_oid_and_limit(const StorageError& e) {
  const std::string what = e.what();
  EXPECT_NE(what.find("oid 0x0000000000000005"), std::string::npos) << what;
  EXPECT_NE(what.find(std::to_string(kLimit)), std::string::npos) << what;
}

// A blob is no state: one larger than a row may hold goes into several chunks (the finish
// must not fail after a vote), which load_blob joins again; one that fits stays one chunk.
TEST(SqliteLimits, ABlobOverTheLengthLimitIsStoredInChunks) {
  EXPECT_EQ(sqlite::blob_chunk_sizes(0, 1'000'000'000), (std::vector<uint64_t>{0}));
  EXPECT_EQ(sqlite::blob_chunk_sizes(5 << 20, 1'000'000'000), (std::vector<uint64_t>{5 << 20}));
  const uint64_t most = 1'000'000'000 - (1 << 20);
  EXPECT_EQ(sqlite::blob_chunk_sizes(2 * most + 7, 1'000'000'000),
            (std::vector<uint64_t>{most, most, 7}));
  EXPECT_EQ(sqlite::blob_chunk_sizes(250'000, kLimit),
            (std::vector<uint64_t>{50'000, 50'000, 50'000, 50'000, 50'000}));
  TempDir d;
  for (const char* mode : {"history=free", "history=preserving"}) {
    SCOPED_TRACE(mode);
    LowLengthLimit low;
    const std::string uri = "sqlite://" + d.sub(mode) + "?" + mode;
    std::string content(250'003, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31 >> 4);
    const std::string file = d.sub(std::string(mode) + ".upload");
    std::ofstream(file, std::ios::binary) << content;
    auto st = open_storage(uri + "&blob_dir=" + d.sub(std::string(mode) + ".a"));
    auto inst = st->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store_blob(Oid(5), std::nullopt, "record", file, txn);
    inst->tpc_vote(txn);
    const Tid tid = inst->tpc_finish(txn);
    auto fresh = open_storage(uri + "&blob_dir=" + d.sub(std::string(mode) + ".b"));
    std::ifstream in(fresh->new_instance()->load_blob(Oid(5), tid), std::ios::binary);
    const std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(back.size(), content.size());
    EXPECT_TRUE(back == content);
  }
}

TEST(SqliteLimits, AStateOverTheLengthLimitFailsTheVote) {
  TempDir d;
  for (const char* mode : {"history=free", "history=preserving"}) {
    SCOPED_TRACE(mode);
    LowLengthLimit low;
    auto st = open_storage("sqlite://" + d.sub(mode) + "?" + mode);
    auto inst = st->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(4), std::nullopt, "small", txn);
    inst->store(Oid(5), std::nullopt, std::string(kLimit + 1, 'x'), txn);
    try {
      inst->tpc_vote(txn);
      ADD_FAILURE() << "voted a state SQLite cannot hold";
    } catch (const StorageError& e) {
      expect_names_oid_and_limit(e);
    }
    inst->tpc_abort(txn);
    auto reader = st->new_instance();
    reader->poll_invalidations();
    EXPECT_THROW(reader->load(Oid(4)), POSKeyError);
    EXPECT_THROW(reader->load(Oid(5)), POSKeyError);
    EXPECT_EQ(reader->last_transaction(), Tid(0));
  }
}

TEST(SqliteLimits, AStateOverTheLengthLimitFailsTheConversion) {
  TempDir d;
  const std::string src = "file://" + d.sub("src.fs");
  {
    auto inst = open_storage(src)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(Oid(4), std::nullopt, "small", txn);
    inst->store(Oid(5), std::nullopt, std::string(kLimit + 1, 'x'), txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  }
  for (const char* mode : {"history=free", "history=preserving"}) {
    SCOPED_TRACE(mode);
    LowLengthLimit low;
    const std::string dst = "sqlite://" + d.sub(mode) + "?" + mode;
    ConvertOptions o;
    o.source = src;
    o.destination = dst;
    try {
      convert(o);
      ADD_FAILURE() << "converted a state SQLite cannot hold";
    } catch (const StorageError& e) {
      expect_names_oid_and_limit(e);
    }
    auto reader = open_storage(dst)->new_instance();
    reader->poll_invalidations();
    EXPECT_THROW(reader->load(Oid(5)), POSKeyError);
    EXPECT_EQ(reader->last_transaction(), Tid(0));
  }
}

}  // namespace
}  // namespace relstore
