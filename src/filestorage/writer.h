// Appending to Data.fs: the lock file, the append itself and the transaction encoding.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "filestorage/oid_index.h"
#include "relstore/storage.h"

namespace relstore::fs {

// A Data.fs opened for appending, with `<path>.lock` held (flock LOCK_EX|LOCK_NB, " <pid>\n"
// written into it) for as long as the object lives.
class AppendFile {
 public:
  // Locks and opens `path`; creates it with the FS30 magic when it is missing or empty and
  // `create` is set. Throws StorageError when the file is locked by another writer or
  // cannot be opened.
  static std::unique_ptr<AppendFile> open(const std::string& path, bool create,
                                          std::string_view magic);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  uint64_t size() const;
  // Removes `<path>.index` (ZODB's cache of offsets), which appending makes stale; called
  // once the file has been read, so that a file refused keeps it.
  void remove_index() const;

  // Copies the bytes from `end` to the end of the file into `<path>.tr<N>` (the first
  // free N), then truncates the file to `end`. Returns the copy's path.
  std::string cut_tail(uint64_t end);
  // Writes `bytes` at `pos` with as few syscalls as the kernel allows, then fsyncs if
  // `sync`. On failure the file is truncated back to `pos` and StorageError is thrown, so
  // a half-written transaction never stays in the file.
  void append(uint64_t pos, std::string_view bytes, bool sync);
  // Overwrites the byte at `pos` (a transaction's status), then fsyncs if `sync`.
  void write_byte(uint64_t pos, char byte, bool sync);
  void truncate(uint64_t size);
  // Makes the file `content` alone (zap_all), by writing a new file and renaming it over
  // this one; the lock is kept.
  void replace_with(std::string_view content);
  void sync();

 private:
  AppendFile(std::string path, int fd, int lock_fd)
      : path_(std::move(path)), fd_(fd), lock_fd_(lock_fd) {}

  std::string path_;
  int fd_;
  int lock_fd_;
};

struct PendingRecord {
  Oid oid;
  std::optional<Bytes> data;  // none: absent (deleted or creation undone)
};

// Throws StorageError unless user, description and extension each fit a 16-bit length.
void check_metadata_lengths(const TransactionMetaData& meta);

// Encodes one transaction (header, metadata, records, trailing length) to be written at
// `tpos`. `prev` of each record is the oid's newest offset in `index`, i.e. as of before
// this transaction. `positions` receives each record's offset.
std::string encode_transaction(uint64_t tpos, Tid tid, char status, const TransactionMetaData& meta,
                               const std::vector<PendingRecord>& records, const OidIndex& index,
                               std::vector<uint64_t>& positions);

}  // namespace relstore::fs
