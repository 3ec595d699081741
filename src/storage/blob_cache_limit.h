// RelStorage's blob-cache-size for a database storage's blob directory, which only caches
// what blob_chunk holds: once blob_cache_size_check percent of the limit has been written
// into it since the last look, the directory is measured and, when over the limit, its
// least recently used files go until it is under the limit by that percentage again.
// A file used (loaded, or written) in the last kBlobInUseSeconds stays whatever its age
// in the ordering: load_blob hands out paths that the application opens afterwards, and
// other processes share the directory, so a fresh file may be about to be read.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "relstore/blob_dir.h"

namespace relstore {

inline constexpr double kBlobInUseSeconds = 60;

struct BlobPruneResult {
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  uint64_t files_removed = 0;
};

class BlobCacheLimit {
 public:
  BlobCacheLimit(const BlobDir& dir, uint64_t limit, double check_percent)
      : dir_(dir), limit_(limit), check_percent_(check_percent) {}

  // A file of `bytes` went into the cache; may prune (one thread at a time, the others go
  // on). Never throws: the cache is only a cache.
  void written(uint64_t bytes) noexcept;
  // Marks a cached file just used (its modification time), so that pruning keeps it
  // longest. Never throws.
  static void touch(const std::string& path) noexcept;
  // Measures the directory and removes least recently used files while it is over the
  // limit (to the limit less the check percentage).
  BlobPruneResult prune() const;

 private:
  const BlobDir& dir_;
  uint64_t limit_;
  double check_percent_;
  std::mutex mu_;
  uint64_t since_check_ = 0;  // bytes written since the last prune, under mu_
  bool pruning_ = false;      // under mu_
};

}  // namespace relstore
