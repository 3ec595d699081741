// FileStorage (Data.fs): ZODB's single-file storage, read and written by relstore
// (filestorage.md). Used by `relstore convert` and by tests that read real ZODB files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "relstore/clock.h"
#include "relstore/errors.h"
#include "relstore/storage.h"
#include "relstore/types.h"

namespace relstore {

// A malformed Data.fs. The message names the file, the byte offset and, where one is
// involved, the oid; the same facts are available as fields.
class FileStorageError : public StorageError {
 public:
  FileStorageError(const std::string& path, uint64_t offset, const std::string& problem,
                   std::optional<Oid> oid = std::nullopt);
  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }
  std::optional<Oid> oid() const { return oid_; }

 private:
  std::string path_;
  uint64_t offset_;
  std::optional<Oid> oid_;
};

// Receives non-fatal findings such as a truncated tail. Null means "print to stderr".
using FileStorageWarning = std::function<void(const std::string& message)>;

struct FileStorageOptions {
  // A read-only FileStorage takes no lock, so it can read a file a running ZODB is using.
  bool read_only = true;
  // Writable only: create the file when it does not exist, with this magic: FS30, or FS21
  // for a copy of a file written by ZODB on Python 2 (whose pickles hold Python 2 strings;
  // ZODB on Python 3 refuses such a file, which is what makes people run zodbupdate).
  bool create = true;
  std::string create_magic = "FS30";
  // Writable only: fsync after every committed transaction (as ZODB does). Off, the file
  // is synced only on close(); a crash can then lose the newest transactions, but never
  // leaves a partial one that a reader accepts.
  bool fsync_each_commit = true;
  // Seconds a commit waits for another instance's commit to finish.
  double commit_lock_timeout = 30.0;
  // Where TIDs come from when tpc_begin is given none; null = the system clock.
  std::shared_ptr<Clock> clock;
  FileStorageWarning on_warning;
};

// Opens a Data.fs as a Storage (backend "file", history-preserving). Read-only, it reads
// the file once to build an oid index and never changes it. Writable, it holds
// `<path>.lock`, removes a stale `<path>.index`, moves a truncated tail aside to
// `<path>.tr<N>` and appends after the last complete transaction. Throws FileStorageError
// for a malformed file and StorageError when the file cannot be opened or locked.
std::unique_ptr<Storage> open_file_storage(const std::string& path,
                                           const FileStorageOptions& options = {});

// Reads the transactions of a Data.fs forward, oldest first, from `start` through `stop`
// (both inclusive), checking every structural rule of the format as it goes. A truncated
// tail ends the iteration with a warning; any other damage throws FileStorageError.
std::unique_ptr<TransactionIterator> iterate_file_storage(const std::string& path,
                                                          std::optional<Tid> start = std::nullopt,
                                                          std::optional<Tid> stop = std::nullopt,
                                                          FileStorageWarning on_warning = {});

// Reads the transactions of a Data.fs backward, newest first, by the trailing length of
// each transaction, starting at byte `end` (default: the end of the file). It checks the
// same rules as the forward reader and throws FileStorageError where they fail, including
// at a truncated tail (the backward reader cannot tell a tail from damage).
std::unique_ptr<TransactionIterator> iterate_file_storage_backward(
    const std::string& path, std::optional<uint64_t> end = std::nullopt);

// The TID of the newest committed transaction, read backward from the end of the file
// (one header, no scan); zero for a file without transactions. A file whose tail is
// truncated is read forward instead, stopping at its last complete transaction.
Tid file_storage_last_tid(const std::string& path, FileStorageWarning on_warning = {});

}  // namespace relstore
