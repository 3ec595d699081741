// The bulk-load lock of a SQLite database: a lock on a file beside it.
#pragma once

#include "adapters/sqlite/adapter.h"

namespace relstore::sqlite {

// Held by a whole load, so that two conversions into one database do not both take it
// for empty, and by zap_all, so that `convert --clear` cannot empty a database while
// another conversion loads it. (The server dialects use a lock of the server session;
// the kernel drops this one with the process, or when the object goes.)
class BulkLock {
 public:
  // Waits up to the location's lock timeout; then throws bulk_load_busy.
  explicit BulkLock(const Location& loc);
  ~BulkLock();
  BulkLock(const BulkLock&) = delete;
  // Whether a load (of this process or another) holds it now; takes nothing.
  static bool held(const Location& loc);
  BulkLock& operator=(const BulkLock&) = delete;

 private:
  int fd_;
};

}  // namespace relstore::sqlite
