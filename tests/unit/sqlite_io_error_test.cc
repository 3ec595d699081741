// A read that fails with an I/O error may end the read transaction inside SQLite, which
// then silently reads the newest data on the next statement. An instance must not carry on
// as if its snapshot were still there: PostgreSQL refuses statements after an error until
// the snapshot is renewed, and the SQLite backend must refuse loads likewise.
//
// The I/O error comes from a VFS of the test's own, registered as the default, that wraps
// the platform's VFS and fails reads while `fail_reads` is set.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "relstore/errors.h"
#include "relstore/storage.h"
#include "support/temp_dir.h"

namespace relstore {
namespace {

using testing::TempDir;

std::atomic<bool> fail_reads{false};

struct ShimFile {
  sqlite3_file base;  // first: SQLite sees a ShimFile as a sqlite3_file
  sqlite3_file* real;
};

sqlite3_vfs* real_vfs = nullptr;
sqlite3_io_methods shim_methods;

sqlite3_file* real_of(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->real; }

int shim_read(sqlite3_file* f, void* buf, int n, sqlite3_int64 offset) {
  if (fail_reads) return SQLITE_IOERR_READ;
  return real_of(f)->pMethods->xRead(real_of(f), buf, n, offset);
}

int shim_close(sqlite3_file* f) {
  sqlite3_file* real = real_of(f);
  const int rc = real->pMethods ? real->pMethods->xClose(real) : SQLITE_OK;
  sqlite3_free(real);
  return rc;
}

// Every method but xRead and xClose passes straight through to the real file.
#define RELSTORE_FORWARD(name, params, args) [] params { return real_of(f)->pMethods->name args; }

void init_methods(int version) {
  shim_methods = {};
  shim_methods.iVersion = version;
  shim_methods.xClose = shim_close;
  shim_methods.xRead = shim_read;
  shim_methods.xWrite = RELSTORE_FORWARD(
      xWrite, (sqlite3_file * f, const void* b, int n, sqlite3_int64 o), (real_of(f), b, n, o));
  shim_methods.xTruncate =
      RELSTORE_FORWARD(xTruncate, (sqlite3_file * f, sqlite3_int64 s), (real_of(f), s));
  shim_methods.xSync = RELSTORE_FORWARD(xSync, (sqlite3_file * f, int fl), (real_of(f), fl));
  shim_methods.xFileSize =
      RELSTORE_FORWARD(xFileSize, (sqlite3_file * f, sqlite3_int64 * s), (real_of(f), s));
  shim_methods.xLock = RELSTORE_FORWARD(xLock, (sqlite3_file * f, int l), (real_of(f), l));
  shim_methods.xUnlock = RELSTORE_FORWARD(xUnlock, (sqlite3_file * f, int l), (real_of(f), l));
  shim_methods.xCheckReservedLock =
      RELSTORE_FORWARD(xCheckReservedLock, (sqlite3_file * f, int* r), (real_of(f), r));
  shim_methods.xFileControl =
      RELSTORE_FORWARD(xFileControl, (sqlite3_file * f, int op, void* a), (real_of(f), op, a));
  shim_methods.xSectorSize = RELSTORE_FORWARD(xSectorSize, (sqlite3_file * f), (real_of(f)));
  shim_methods.xDeviceCharacteristics =
      RELSTORE_FORWARD(xDeviceCharacteristics, (sqlite3_file * f), (real_of(f)));
  if (version < 2) return;
  shim_methods.xShmMap =
      RELSTORE_FORWARD(xShmMap, (sqlite3_file * f, int pg, int sz, int ext, void volatile** p),
                       (real_of(f), pg, sz, ext, p));
  shim_methods.xShmLock = RELSTORE_FORWARD(xShmLock, (sqlite3_file * f, int off, int n, int fl),
                                           (real_of(f), off, n, fl));
  shim_methods.xShmBarrier = [](sqlite3_file* f) { real_of(f)->pMethods->xShmBarrier(real_of(f)); };
  shim_methods.xShmUnmap =
      RELSTORE_FORWARD(xShmUnmap, (sqlite3_file * f, int del), (real_of(f), del));
  // No xFetch/xUnfetch (version 3): without memory-mapped reads every read goes to xRead.
  shim_methods.iVersion = 2;
}
#undef RELSTORE_FORWARD

int shim_open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* shim = reinterpret_cast<ShimFile*>(f);
  shim->base.pMethods = nullptr;
  shim->real = static_cast<sqlite3_file*>(sqlite3_malloc(real_vfs->szOsFile));
  if (!shim->real) return SQLITE_NOMEM;
  std::memset(shim->real, 0, real_vfs->szOsFile);
  const int rc = real_vfs->xOpen(real_vfs, name, shim->real, flags, out_flags);
  if (rc != SQLITE_OK || !shim->real->pMethods) {
    if (shim->real->pMethods) shim->real->pMethods->xClose(shim->real);
    sqlite3_free(shim->real);
    return rc;
  }
  if (shim_methods.xRead == nullptr) init_methods(shim->real->pMethods->iVersion);
  shim->base.pMethods = &shim_methods;
  return SQLITE_OK;
}

// Registers the shim as the default VFS for the rest of this test program.
void install_shim() {
  static sqlite3_vfs shim;
  if (real_vfs) return;
  real_vfs = sqlite3_vfs_find(nullptr);
  shim = *real_vfs;
  shim.zName = "relstore-test-fail-reads";
  shim.szOsFile = sizeof(ShimFile);
  shim.xOpen = shim_open;
  ASSERT_EQ(sqlite3_vfs_register(&shim, 1), SQLITE_OK);
}

Tid commit(StorageInstance& inst, Oid oid, std::optional<Tid> serial, const std::string& data) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  inst.store(oid, serial, data, txn);
  inst.tpc_vote(txn);
  return inst.tpc_finish(txn);
}

TEST(SqliteIoError, ALoadThatFailsLeavesNoReadsOutsideTheSnapshot) {
  install_shim();
  TempDir d;
  auto st = open_storage("sqlite://" + d.sub("db") + "?history=free&cache_mb=0");
  auto writer = st->new_instance();
  // Large enough for overflow pages that the reader's poll does not touch.
  const Tid t = commit(*writer, Oid(1), std::nullopt, std::string(200'000, 'a'));
  auto reader = st->new_instance();
  reader->poll_invalidations();

  fail_reads = true;
  EXPECT_THROW(reader->load(Oid(1)), StorageError);
  fail_reads = false;

  commit(*writer, Oid(1), t, std::string(200'000, 'b'));
  // The reader has not polled: it may not see the new revision. Either its snapshot still
  // holds (the first revision), or it says the snapshot is gone.
  try {
    EXPECT_EQ(reader->load(Oid(1)).data.front(), 'a') << "a read outside the reader's snapshot";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("snapshot"), std::string::npos) << e.what();
  }
  reader->poll_invalidations();
  EXPECT_EQ(reader->load(Oid(1)).data.front(), 'b');
}

TEST(SqliteIoError, AnIteratorThatFailedDoesNotStartOver) {
  install_shim();
  TempDir d;
  auto st = open_storage("sqlite://" + d.sub("db") + "?history=preserving");
  auto writer = st->new_instance();
  std::vector<Tid> tids;
  for (uint64_t oid = 1; oid <= 3; ++oid) {
    tids.push_back(commit(*writer, Oid(oid), std::nullopt,
                          std::string(200'000, static_cast<char>('a' + oid))));
  }
  auto it = writer->iterator();
  TransactionRecord first;
  ASSERT_TRUE(it->next(first));
  ASSERT_EQ(first.tid, tids[0]);
  TransactionRecord rec;
  fail_reads = true;
  EXPECT_THROW(it->next(rec), StorageError);
  fail_reads = false;
  try {
    ASSERT_TRUE(it->next(rec));
    EXPECT_EQ(rec.tid, tids[1]) << "the iteration skipped a transaction or started over";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relstore
