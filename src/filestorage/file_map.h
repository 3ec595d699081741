// A read-only memory mapping of a prefix of a file: the reader's only view of Data.fs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace relstore::fs {

// mmap instead of buffered reads: the forward scan touches every header once and hands
// out record bytes with a single copy, without a syscall per record. A mapping never
// changes; a writer that appends makes a new one, so iterators keep their snapshot.
class FileMap {
 public:
  // Maps the whole file. Throws StorageError when it cannot be opened.
  static std::shared_ptr<const FileMap> open(const std::string& path);
  // Maps the first `size` bytes of an open file descriptor (not taken over).
  static std::shared_ptr<const FileMap> map(int fd, const std::string& path, uint64_t size);

  FileMap(const FileMap&) = delete;
  FileMap& operator=(const FileMap&) = delete;
  ~FileMap();

  const std::string& path() const { return path_; }
  // Unique among the maps of this process, unlike the address, which a later map may reuse.
  uint64_t serial() const { return serial_; }
  uint64_t size() const { return size_; }
  // True when [pos, pos + n) lies inside the mapping (overflow-safe).
  bool has(uint64_t pos, uint64_t n) const { return pos <= size_ && n <= size_ - pos; }
  const unsigned char* at(uint64_t pos) const { return base_ + pos; }
  std::string_view view(uint64_t pos, uint64_t n) const {
    return {reinterpret_cast<const char*>(base_ + pos), static_cast<size_t>(n)};
  }
  // Reads [pos, pos + n) from the file itself, not the mapping: false when the file ends
  // before (it was truncated since it was mapped). A mapped page past the file's end would
  // raise SIGBUS instead, so the parts of a file another process may still cut (the
  // unfinished transaction ZODB truncates when a commit aborts) are read this way.
  bool read(uint64_t pos, uint64_t n, unsigned char* out) const;
  // Tells the kernel the file is about to be read front to back (read-ahead).
  void advise_sequential() const;

 private:
  FileMap(std::string path, const unsigned char* base, uint64_t size);

  std::string path_;
  const unsigned char* base_;
  uint64_t size_;
  uint64_t serial_;
  int fd_ = -1;  // a descriptor of its own for read()
};

}  // namespace relstore::fs
