// Bulk loading into SQLite for `relstore convert`: the OID allocator (oids.sqlite3, a file
// of its own) moves before a batch commits, so no batch lands without it. It used to move
// after: when that failed (the file locked, the process killed), a resume copied nothing
// and new_oid handed out OIDs the load had written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include "relstore/convert.h"
#include "relstore/errors.h"
#include "relstore/sample.h"
#include "relstore/storage.h"
#include "support/compare.h"
#include "support/file_size_limit.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

// A sample of `objects` objects written into `uri`.
void write_objects(const std::string& uri, uint64_t objects) {
  SampleOptions sample;
  sample.objects = objects;
  write_sample(uri, sample);
}

// Takes the bulk-load lock of the database in `dir` as a loading conversion holds it;
// closing the descriptor lets it go.
int hold_bulk_lock(const std::string& dir) {
  const int fd = ::open((dir + "/bulk-load.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::flock(fd, LOCK_EX), 0);
  return fd;
}

TEST(SqliteBulk, ABatchLandsOnlyWithTheOidAllocatorPastIt) {
  TempDir d;
  const std::string src = "sqlite://" + d.sub("src");
  write_objects(src, 500);
  uint64_t records = 0;
  {
    auto it = open_storage(src)->new_instance()->iterator();
    TransactionRecord t;
    while (it->next(t)) records += t.records.size();
  }
  for (const char* mode : {"history=free", "history=preserving"}) {
    SCOPED_TRACE(mode);
    const std::string dir = d.sub(mode);
    const std::string dst = "sqlite://" + dir + "?" + mode;
    // Two batches. When the first has landed, a reader of the allocator's file (rollback
    // journal) starts: writers there can begin but not commit until it ends, so the
    // second, last batch cannot move the allocator.
    sqlite3* holder = nullptr;
    ConvertOptions o;
    o.source = src;
    o.destination = dst + "&commit_lock_timeout=1";
    o.batch_records = records / 2 + 1;
    o.on_progress = [&](const ConvertProgress&) {
      if (holder) return;
      ASSERT_EQ(sqlite3_open((dir + "/oids.sqlite3").c_str(), &holder), SQLITE_OK);
      ASSERT_EQ(sqlite3_exec(holder, "BEGIN; SELECT * FROM new_oid", nullptr, nullptr, nullptr),
                SQLITE_OK);
    };
    EXPECT_THROW(convert(o), StorageError);
    ASSERT_NE(holder, nullptr);
    sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    o.on_progress = nullptr;
    o.incremental = true;
    convert(o);
    EXPECT_EQ(testing::storage_differences(src, dst), std::vector<std::string>{});
    auto inst = open_storage(dst)->new_instance();
    EXPECT_GT(inst->new_oid(), Oid(499)) << "new_oid handed out an OID the load wrote";
  }
}

// Emptying the database (convert --clear) holds the bulk-load lock too: while a load
// holds it, the zap waits, then gives up after commit_lock_timeout with nothing removed
// (a conversion's copy must not be emptied under it).
TEST(SqliteBulk, ZapWaitsForABulkLoadStillWriting) {
  TempDir d;
  const std::string dir = d.sub("db");
  const std::string uri = "sqlite://" + dir + "?commit_lock_timeout=1";
  write_objects(uri, 20);
  const int fd = hold_bulk_lock(dir);
  auto st = open_storage(uri);
  const uint64_t objects = st->info().objects;
  ASSERT_GT(objects, 0u);
  try {
    st->zap_all();
    ADD_FAILURE() << "emptied the database under a bulk load";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("another bulk load is writing"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(st->info().objects, objects);
  ::close(fd);
  st->zap_all();
  EXPECT_EQ(st->info().objects, 0u);
}

// A bulk load killed before it switched the database back to WAL mode leaves it with a
// rollback journal, under which commits wait for every reader. The next writer, whatever
// its options (create=false too), puts WAL mode back.
TEST(SqliteBulk, AJournalModeLeftByAKilledLoadGoesBackToWal) {
  TempDir d;
  const std::string dir = d.sub("db");
  write_objects("sqlite://" + dir, 10);
  const std::string main = dir + "/main.sqlite3";
  const auto journal_mode = [&] {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(main.c_str(), &db), SQLITE_OK);
    std::string mode;
    auto first_column = [](void* out, int, char** values, char**) {
      *static_cast<std::string*>(out) = values[0] ? values[0] : "";
      return 0;
    };
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA journal_mode", first_column, &mode, nullptr), SQLITE_OK);
    sqlite3_close(db);
    return mode;
  };
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(main.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode = TRUNCATE", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_NE(journal_mode(), "wal");  // only WAL mode is kept in the file
  const auto commit_one = [&](const std::string& query) {
    auto inst = open_storage("sqlite://" + dir + query)->new_instance();
    TransactionMetaData txn{"", "", ""};
    inst->tpc_begin(txn);
    inst->store(inst->new_oid(), std::nullopt, "after the killed load", txn);
    inst->tpc_vote(txn);
    inst->tpc_finish(txn);
  };
  // Not while a load runs (it holds the bulk-load lock and switches back when it ends).
  const int fd = hold_bulk_lock(dir);
  commit_one("?create=false");
  commit_one("");  // nor by the schema check of a writable open that may create
  EXPECT_NE(journal_mode(), "wal") << "switched under a running load";
  ::close(fd);
  commit_one("?create=false");
  EXPECT_EQ(journal_mode(), "wal");
}

// A batch that fails writing (here the process's file size limit, as a full disk would)
// is reported as what it is: SQLite has already rolled the transaction back, and the
// ROLLBACK sent after it used to replace the error with "no transaction is active".
TEST(SqliteBulk, AFailedWriteIsReportedAsItself) {
  TempDir d;
  const std::string src = "sqlite://" + d.sub("src");
  write_objects(src, 3000);
  for (const char* mode : {"history=free", "history=preserving"}) {
    SCOPED_TRACE(mode);
    ConvertOptions o;
    o.source = src;
    o.destination = "sqlite://" + d.sub(mode) + "?" + mode;
    open_storage(o.destination)->close();  // the schema, before the limit
    std::string error;
    try {
      const testing::FileSizeLimit limit(256 * 1024);
      convert(o);
    } catch (const StorageError& e) {
      error = e.what();
    }
    ASSERT_FALSE(error.empty()) << "the copy fit under the limit";
    EXPECT_EQ(error.find("no transaction is active"), std::string::npos) << error;
    EXPECT_TRUE(error.find("full") != std::string::npos || error.find("I/O") != std::string::npos ||
                error.find("large") != std::string::npos)
        << error;
  }
}

}  // namespace
}  // namespace relstore
