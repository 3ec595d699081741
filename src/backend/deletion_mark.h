// History-free deletions and polls. Deleting an object in a history-free database removes
// its row (as RelStorage does), so no poll can list the deletion. relstore records the TID
// of the last commit that deleted anything (table relstore_hf_deletion, a migration), and
// a poll that sees that record move reports "everything changed" instead of a list that
// misses the deleted objects. Databases without the table (not migrated) poll as before.
#pragma once

#include <optional>

#include "relstore/types.h"

namespace relstore::backend {

// The name of the one-row table; its row has id 0 and the TID.
inline constexpr const char* kDeletionMarkTable = "relstore_hf_deletion";

// What one load connection knows of the record.
class DeletionMark {
 public:
  // `mark`: the record as the new snapshot sees it (none without the table). True when
  // objects were deleted since the previous snapshot of this connection, or, on its
  // first snapshot, after `since`.
  bool moved(std::optional<Tid> mark, std::optional<Tid> since) {
    bool moved = false;
    if (mark && since) moved = last_ ? *mark != *last_ : *mark > *since;
    last_ = mark;
    return moved;
  }
  // A new connection starts over.
  void reset() { last_.reset(); }

 private:
  std::optional<Tid> last_;
};

}  // namespace relstore::backend
