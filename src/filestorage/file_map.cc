#include "filestorage/file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "relstore/errors.h"

namespace relstore::fs {

FileMap::FileMap(std::string path, const unsigned char* base, uint64_t size)
    : path_(std::move(path)), base_(base), size_(size) {
  static std::atomic<uint64_t> next{1};
  serial_ = next++;
}

std::shared_ptr<const FileMap> FileMap::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw StorageError("cannot open FileStorage " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw StorageError("cannot stat FileStorage " + path + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {  // mmap would say "No such device" of a directory
    ::close(fd);
    throw StorageError("cannot open FileStorage " + path + ": " +
                       (S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file"));
  }
  try {
    auto m = map(fd, path, static_cast<uint64_t>(st.st_size));
    ::close(fd);  // the mapping keeps the file's pages reachable
    return m;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

std::shared_ptr<const FileMap> FileMap::map(int fd, const std::string& path, uint64_t size) {
  const unsigned char* base = nullptr;
  // mmap rejects a zero length; an empty mapping needs no pages.
  if (size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      throw StorageError("cannot map FileStorage " + path + ": " + std::strerror(errno));
    }
    base = static_cast<const unsigned char*>(p);
  }
  auto out = std::shared_ptr<FileMap>(new FileMap(path, base, size));
  out->fd_ = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (out->fd_ < 0) {
    throw StorageError("cannot open FileStorage " + path + " again: " + std::strerror(errno));
  }
  return out;
}

FileMap::~FileMap() {
  if (base_) munmap(const_cast<unsigned char*>(base_), static_cast<size_t>(size_));
  if (fd_ >= 0) ::close(fd_);
}

bool FileMap::read(uint64_t pos, uint64_t n, unsigned char* out) const {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got =
        ::pread(fd_, out + done, static_cast<size_t>(n - done), static_cast<off_t>(pos + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<uint64_t>(got);
  }
  return true;
}

void FileMap::advise_sequential() const {
  if (base_)
    madvise(const_cast<unsigned char*>(base_), static_cast<size_t>(size_), MADV_SEQUENTIAL);
}

}  // namespace relstore::fs
