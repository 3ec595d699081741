// Which objects reference which, as pack's garbage collection and `relstore verify` read
// it from the records (the pickle decoder's reference scanner).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "relstore/pickle.h"
#include "relstore/types.h"

namespace relstore {

class ObjectGraph {
 public:
  // Adds the references of `record`, the state of `oid` (to those of its other states:
  // references only ever add up). Throws PickleError when they cannot be read.
  void add(Oid oid, std::string_view record) {
    auto& out = refs_[oid.value()];
    for (const Oid r : scan_references(record)) out.push_back(r.value());
  }

  const std::vector<uint64_t>* references(uint64_t oid) const {
    const auto it = refs_.find(oid);
    return it == refs_.end() ? nullptr : &it->second;
  }

  // Adds to `seen` what `roots` reach. A root may have been reached before and have new
  // references since (it was written again), so its references are followed whether or
  // not it was.
  void reach(const std::vector<uint64_t>& roots, std::unordered_set<uint64_t>& seen) const {
    std::vector<uint64_t> todo;
    const auto follow = [&](uint64_t oid) {
      if (const auto* refs = references(oid)) {
        for (const uint64_t r : *refs) {
          if (!seen.count(r)) todo.push_back(r);
        }
      }
    };
    for (const uint64_t root : roots) {
      seen.insert(root);
      follow(root);
    }
    while (!todo.empty()) {
      const uint64_t oid = todo.back();
      todo.pop_back();
      if (seen.insert(oid).second) follow(oid);
    }
  }

 private:
  std::unordered_map<uint64_t, std::vector<uint64_t>> refs_;
};

}  // namespace relstore
