// The in-memory oid -> newest record offset map of an open FileStorage.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "relstore/types.h"

namespace relstore::fs {

// One hash map entry per oid; the "absent" flag rides in the top bit of the offset
// (Data.fs offsets never reach 2^63), so len() and record_iternext need no file reads.
class OidIndex {
 public:
  struct Entry {
    uint64_t pos;
    bool absent;  // the newest revision is a deletion or an undone creation
  };

  std::optional<Entry> find(Oid oid) const;
  void set(Oid oid, uint64_t pos, bool absent);
  void clear();

  size_t size() const { return map_.size(); }
  // Oids whose newest revision is not absent.
  uint64_t live() const { return live_; }
  std::optional<Oid> max_oid() const { return max_oid_; }

  // The first oid >= `from` whose newest revision is not absent, and the one after it.
  // With `live`, the first two for which it says true instead (it gets the oid and the
  // offset of its newest record, absent or not): a view as of an older TID.
  // Thread-safe against other readers; the caller excludes writers.
  std::pair<std::optional<Oid>, std::optional<Oid>> live_from(
      Oid from, const std::function<bool(Oid, uint64_t)>& live = nullptr) const;

 private:
  static constexpr uint64_t kAbsent = uint64_t{1} << 63;

  std::unordered_map<uint64_t, uint64_t> map_;
  uint64_t live_ = 0;
  std::optional<Oid> max_oid_;
  // Sorted oids for OID-order walks, built on first use after a change.
  mutable std::mutex sorted_mu_;
  mutable std::vector<uint64_t> sorted_;
  mutable bool sorted_valid_ = false;
};

}  // namespace relstore::fs
