// The shared (oid, tid) -> state cache of one Storage.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "relstore/types.h"

namespace relstore {

// A least-recently-used cache bounded by bytes. Keys are (oid, tid): a revision's bytes
// never change while the database keeps it. A zap, or a database restored to an earlier
// point, can give an (oid, tid) other bytes later; clear() empties the cache and starts a
// new generation, and a put made for an older generation (a reader whose snapshot began
// before) is dropped, so such bytes do not come back. Thread-safe.
class StateCache {
 public:
  explicit StateCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  std::optional<Bytes> get(Oid oid, Tid tid);
  void put(Oid oid, Tid tid, const Bytes& state, uint64_t generation);
  void clear();
  uint64_t generation() const;
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
  // Per-entry bookkeeping charged against the budget along with the bytes themselves: a
  // list node and a hash node with its bucket, and the state's own heap block (measured
  // with mallinfo2 on glibc: 150-200 bytes beyond the state for small states).
  static constexpr size_t kOverhead = 176;
  static size_t cost(const Bytes& state) { return state.capacity() + kOverhead; }

  mutable std::mutex mu_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t generation_ = 0;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index_;
};

}  // namespace relstore
