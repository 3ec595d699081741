// The shared (oid, tid) -> state cache of one Storage.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "relstore/types.h"

namespace relstore {

// A least-recently-used cache bounded by bytes. Keys are (oid, tid), so entries never go
// stale: a revision's bytes never change. Thread-safe.
class StateCache {
 public:
  explicit StateCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  std::optional<Bytes> get(Oid oid, Tid tid);
  void put(Oid oid, Tid tid, const Bytes& state);
  void clear();
  size_t bytes() const;

 private:
  struct Key {
    Oid oid;
    Tid tid;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return std::hash<Oid>()(k.oid) ^ (std::hash<Tid>()(k.tid) << 1);
    }
  };
  struct Entry {
    Key key;
    Bytes state;
  };
  // Per-entry bookkeeping charged against the budget along with the bytes themselves.
  static constexpr size_t kOverhead = 96;

  mutable std::mutex mu_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index_;
};

}  // namespace relstore
