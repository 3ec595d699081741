#include "storage/blob_cache_limit.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

namespace relstore {
namespace {

namespace fs = std::filesystem;

struct Cached {
  fs::file_time_type used;
  uint64_t bytes;
  std::string path;
};

}  // namespace

void BlobCacheLimit::written(uint64_t bytes) noexcept {
  {
    const std::lock_guard lock(mu_);
    since_check_ += bytes;
    if (pruning_ ||
        static_cast<double>(since_check_) < static_cast<double>(limit_) * check_percent_ / 100) {
      return;
    }
    since_check_ = 0;
    pruning_ = true;
  }
  try {
    prune();  // outside the lock: other threads' loads and commits do not wait for it
  } catch (const std::exception&) {
    // A directory that cannot be read now is measured again after the next check's bytes.
  }
  const std::lock_guard lock(mu_);
  pruning_ = false;
}

void BlobCacheLimit::touch(const std::string& path) noexcept {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

BlobPruneResult BlobCacheLimit::prune() const {
  BlobPruneResult out;
  std::vector<Cached> files;
  for (const BlobFile& f : dir_.list()) {
    std::error_code ec;
    const uint64_t bytes = fs::file_size(f.path, ec);
    const auto used = fs::last_write_time(f.path, ec);
    if (ec) continue;  // gone meanwhile (another process pruned it)
    files.push_back({used, bytes, f.path});
    out.bytes_before += bytes;
  }
  out.bytes_after = out.bytes_before;
  if (out.bytes_before <= limit_) return out;
  const auto target =
      static_cast<uint64_t>(static_cast<double>(limit_) * (100 - check_percent_) / 100);
  std::sort(files.begin(), files.end(),
            [](const Cached& a, const Cached& b) { return a.used < b.used; });
  const auto in_use_since =
      fs::file_time_type::clock::now() - std::chrono::duration_cast<fs::file_time_type::duration>(
                                             std::chrono::duration<double>(kBlobInUseSeconds));
  for (const Cached& f : files) {
    if (out.bytes_after <= target || f.used > in_use_since) break;
    std::error_code ec;
    if (fs::remove(f.path, ec)) {
      out.bytes_after -= f.bytes;
      ++out.files_removed;
    }
  }
  return out;
}

}  // namespace relstore
