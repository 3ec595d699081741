#include "storage/state_cache.h"

namespace relstore {

std::optional<Bytes> StateCache::get(Oid oid, Tid tid) {
  std::lock_guard lock(mu_);
  auto it = index_.find(Key{oid, tid});
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->state;
}

void StateCache::put(Oid oid, Tid tid, const Bytes& state, uint64_t generation) {
  if (state.size() + kOverhead > max_bytes_ / 4) return;  // one huge record must not flush all
  std::lock_guard lock(mu_);
  if (generation != generation_) return;
  const Key key{oid, tid};
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.push_front(Entry{key, state});
  index_.emplace(key, lru_.begin());
  bytes_ += cost(lru_.front().state);
  while (bytes_ > max_bytes_ && !lru_.empty()) {
    Entry& victim = lru_.back();
    bytes_ -= cost(victim.state);
    index_.erase(victim.key);
    lru_.pop_back();
  }
}

void StateCache::clear() {
  std::lock_guard lock(mu_);
  index_.clear();
  lru_.clear();
  bytes_ = 0;
  ++generation_;
}

uint64_t StateCache::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

size_t StateCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace relstore
