#include "adapters/sqlite/bulk_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "backend/adapter.h"
#include "relstore/errors.h"

namespace relstore::sqlite {

namespace {
std::string lock_path(const Location& loc) { return loc.dir + "/bulk-load.lock"; }
}  // namespace

BulkLock::BulkLock(const Location& loc) {
  const std::string path = lock_path(loc);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw StorageError("cannot open " + path + ": " + std::strerror(errno));
  const auto start = std::chrono::steady_clock::now();
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (errno != EWOULDBLOCK || waited >= loc.lock_timeout) {
      ::close(fd_);
      throw backend::bulk_load_busy(waited);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

BulkLock::~BulkLock() { ::close(fd_); }  // releases the lock

bool BulkLock::held(const Location& loc) {
  const int fd = ::open(lock_path(loc).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;  // no load ever ran here
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);  // lets go of the probe's lock, if it took it
  return held;
}

}  // namespace relstore::sqlite
