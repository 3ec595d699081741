// Calling an application's conflict resolver, for every backend.
#pragma once

#include "relstore/errors.h"
#include "relstore/storage.h"

namespace relstore {

// The resolver's merged state, or `unresolved` thrown when it cannot resolve, fails, or
// returns an empty state (no pickle; written to a Data.fs it would read as a deletion).
// Nothing but that ConflictError escapes (conformance line 17).
inline Bytes resolve_with(const ConflictResolver& resolver, const ConflictInput& input,
                          const ConflictError& unresolved) {
  std::optional<Bytes> merged;
  try {
    merged = resolver(input);
  } catch (...) {
    throw unresolved;
  }
  if (!merged || merged->empty()) throw unresolved;
  return std::move(*merged);
}

}  // namespace relstore
