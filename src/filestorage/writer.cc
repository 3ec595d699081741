#include "filestorage/writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "filestorage/format.h"
#include "relstore/errors.h"
#include "relstore/filestorage.h"

namespace relstore::fs {
namespace {

[[noreturn]] void fail_errno(const std::string& what, const std::string& path) {
  throw StorageError(what + " " + path + ": " + std::strerror(errno));
}

void write_all(int fd, const char* p, size_t n, uint64_t pos, const std::string& path) {
  while (n > 0) {
    const ssize_t w = pwrite(fd, p, n, static_cast<off_t>(pos));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail_errno("cannot write to", path);
    }
    p += w;
    n -= static_cast<size_t>(w);
    pos += static_cast<uint64_t>(w);
  }
}

int take_lock(const std::string& path) {
  const std::string lock_path = path + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot open the lock file", lock_path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[64] = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    while (!holder.empty() && holder.front() == ' ') holder.erase(0, 1);
    if (err == EWOULDBLOCK) {
      throw StorageError("FileStorage " + path + " is in use by another writer (" + lock_path +
                         " is locked" + (holder.empty() ? "" : " by pid " + holder) + ")");
    }
    errno = err;
    fail_errno("cannot lock", lock_path);
  }
  // Same content as ZODB's lock file: a space, the pid, a newline.
  const std::string content = " " + std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    fail_errno("cannot write the lock file", lock_path);
  }
  try {
    write_all(fd, content.data(), content.size(), 0, lock_path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

// Makes a new name in the file's directory (a creation or a rename) durable.
void sync_directory_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the data itself is synced
  fsync(fd);
  ::close(fd);
}

}  // namespace

std::unique_ptr<AppendFile> AppendFile::open(const std::string& path, bool create,
                                             std::string_view magic) {
  if (create) {
    // As a sqlite: URI's directory is made: `relstore sample file:var/Data.fs` in a fresh
    // checkout.
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec)
      throw StorageError("cannot create the directory " + parent.string() + ": " + ec.message());
  }
  const int lock_fd = take_lock(path);
  const int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    const int err = errno;
    ::close(lock_fd);
    errno = err;
    fail_errno("cannot open FileStorage", path);
  }
  std::unique_ptr<AppendFile> f(new AppendFile(path, fd, lock_fd));
  if (f->size() == 0) {
    if (!create) throw FileStorageError(path, 0, "empty file: not a FileStorage");
    if (magic != kMagicFS30 && magic != kMagicFS21) {
      throw StorageError("cannot create " + path + " with the magic '" + std::string(magic) +
                         "': expected FS30 or FS21");
    }
    f->append(0, magic, true);
    // The new file's name must outlast a crash as its first commits do.
    sync_directory_of(path);
  }
  return f;
}

void AppendFile::remove_index() const {
  // The index caches offsets as of some earlier end of file; once we append it is stale
  // and ZODB would have to notice. Nothing trusts a missing index.
  std::error_code ec;
  std::filesystem::remove(path_ + ".index", ec);
  if (ec) throw StorageError("cannot remove the stale index " + path_ + ".index: " + ec.message());
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) {
    fsync(fd_);
    ::close(fd_);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

uint64_t AppendFile::size() const {
  struct stat st {};
  if (fstat(fd_, &st) != 0) fail_errno("cannot stat", path_);
  return static_cast<uint64_t>(st.st_size);
}

std::string AppendFile::cut_tail(uint64_t end) {
  const uint64_t total = size();
  std::string tail_path;
  for (int n = 0;; ++n) {
    tail_path = path_ + ".tr" + std::to_string(n);
    if (!std::filesystem::exists(tail_path)) break;
  }
  const int out = ::open(tail_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) fail_errno("cannot create", tail_path);
  std::string buf(1 << 16, '\0');
  uint64_t pos = end;
  try {
    while (pos < total) {
      const ssize_t n = pread(fd_, buf.data(), std::min<uint64_t>(buf.size(), total - pos),
                              static_cast<off_t>(pos));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail_errno("cannot read the tail of", path_);
      write_all(out, buf.data(), static_cast<size_t>(n), pos - end, tail_path);
      pos += static_cast<uint64_t>(n);
    }
    if (fsync(out) != 0) fail_errno("cannot sync", tail_path);
  } catch (...) {
    ::close(out);
    throw;
  }
  ::close(out);
  sync_directory_of(tail_path);  // the copy's name is durable before the file is cut
  truncate(end);
  return tail_path;
}

void AppendFile::append(uint64_t pos, std::string_view bytes, bool sync_now) {
  try {
    write_all(fd_, bytes.data(), bytes.size(), pos, path_);
    if (sync_now) sync();
  } catch (...) {
    // Best effort: leave no partial transaction behind (a reader would stop there anyway).
    if (ftruncate(fd_, static_cast<off_t>(pos)) == 0) fsync(fd_);
    throw;
  }
}

void AppendFile::replace_with(std::string_view content) {
  // Written beside the file, synced, then renamed over it: a crash leaves the old file or
  // the new one, and readers that map the old file keep its bytes (its inode lives on
  // until they unmap it) instead of faulting on a file truncated under them.
  const std::string tmp = path_ + ".zap.tmp";
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CLOEXEC | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail_errno("cannot create", tmp);
  if (::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()) ||
      fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = err;
    fail_errno("cannot write", tmp);
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = err;
    fail_errno("cannot replace", path_);
  }
  sync_directory_of(path_);
  ::close(fd_);
  fd_ = fd;
}

void AppendFile::write_byte(uint64_t pos, char byte, bool sync_now) {
  write_all(fd_, &byte, 1, pos, path_);
  if (sync_now) sync();
}

void AppendFile::truncate(uint64_t new_size) {
  if (ftruncate(fd_, static_cast<off_t>(new_size)) != 0) fail_errno("cannot truncate", path_);
  sync();
}

void AppendFile::sync() {
  if (fsync(fd_) != 0) fail_errno("cannot sync", path_);
}

void check_metadata_lengths(const TransactionMetaData& meta) {
  const std::pair<const char*, const Bytes*> fields[] = {
      {"user", &meta.user}, {"description", &meta.description}, {"extension", &meta.extension}};
  for (const auto& [name, value] : fields) {
    if (value->size() > kMaxMetaLength) {
      throw StorageError(std::string("FileStorage cannot store a transaction ") + name + " of " +
                         std::to_string(value->size()) + " bytes (at most " +
                         std::to_string(kMaxMetaLength) + ")");
    }
  }
}

std::string encode_transaction(uint64_t tpos, Tid tid, char status, const TransactionMetaData& meta,
                               const std::vector<PendingRecord>& records, const OidIndex& index,
                               std::vector<uint64_t>& positions) {
  check_metadata_lengths(meta);
  for (const auto& r : records) {
    // plen 0 means "a back pointer follows": an empty record would shift every byte after
    // it. Callers refuse these before vote; this keeps a slip from corrupting the file.
    if (r.data && r.data->empty()) {
      throw StorageError("FileStorage cannot store an empty record (oid " + r.oid.hex() + ")");
    }
  }
  uint64_t tlen =
      kTxnHeaderSize + meta.user.size() + meta.description.size() + meta.extension.size();
  for (const auto& r : records)
    tlen += kDataHeaderSize + (r.data ? r.data->size() : kBackPointerSize);
  std::string out;
  out.reserve(tlen + kTrailerSize);
  TxnHeader h;
  h.pos = tpos;
  h.tid = tid;
  h.tlen = tlen;
  h.status = status;
  h.ulen = static_cast<uint16_t>(meta.user.size());
  h.dlen = static_cast<uint16_t>(meta.description.size());
  h.elen = static_cast<uint16_t>(meta.extension.size());
  append_txn_header(out, h);
  out += meta.user;
  out += meta.description;
  out += meta.extension;
  positions.clear();
  for (const auto& r : records) {
    DataHeader d;
    d.pos = tpos + out.size();
    d.oid = r.oid;
    d.tid = tid;
    const auto prev = index.find(r.oid);
    d.prev = prev ? prev->pos : 0;
    d.tloc = tpos;
    d.plen = r.data ? r.data->size() : 0;
    positions.push_back(d.pos);
    append_data_header(out, d);
    if (r.data) {
      out += *r.data;
    } else {
      append_be64(out, 0);  // back pointer 0: absent in this revision
    }
  }
  append_be64(out, tlen);
  return out;
}

}  // namespace relstore::fs
