#include "filestorage/oid_index.h"

#include <algorithm>

namespace relstore::fs {

std::optional<OidIndex::Entry> OidIndex::find(Oid oid) const {
  const auto it = map_.find(oid.value());
  if (it == map_.end()) return std::nullopt;
  return Entry{it->second & ~kAbsent, (it->second & kAbsent) != 0};
}

void OidIndex::set(Oid oid, uint64_t pos, bool absent) {
  auto [it, inserted] = map_.try_emplace(oid.value(), 0);
  if (inserted) {
    sorted_valid_ = false;
    if (!max_oid_ || oid > *max_oid_) max_oid_ = oid;
  } else if ((it->second & kAbsent) == 0) {
    --live_;
  }
  if (!absent) ++live_;
  it->second = pos | (absent ? kAbsent : 0);
}

void OidIndex::clear() {
  map_.clear();
  live_ = 0;
  max_oid_.reset();
  std::lock_guard lock(sorted_mu_);
  sorted_.clear();
  sorted_valid_ = false;
}

std::pair<std::optional<Oid>, std::optional<Oid>> OidIndex::live_from(
    Oid from, const std::function<bool(Oid, uint64_t)>& live) const {
  std::lock_guard lock(sorted_mu_);
  if (!sorted_valid_) {
    sorted_.clear();
    sorted_.reserve(map_.size());
    for (const auto& [oid, pos] : map_) sorted_.push_back(oid);
    std::sort(sorted_.begin(), sorted_.end());
    sorted_valid_ = true;
  }
  std::pair<std::optional<Oid>, std::optional<Oid>> out;
  for (auto it = std::lower_bound(sorted_.begin(), sorted_.end(), from.value());
       it != sorted_.end(); ++it) {
    const uint64_t entry = map_.at(*it);
    if (live ? !live(Oid(*it), entry & ~kAbsent) : (entry & kAbsent) != 0) continue;
    if (!out.first) {
      out.first = Oid(*it);
    } else {
      out.second = Oid(*it);
      break;
    }
  }
  return out;
}

}  // namespace relstore::fs
