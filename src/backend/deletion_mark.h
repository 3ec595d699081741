// What a poll reads besides the changes it lists, to tell when it cannot list them.
//
// History-free: deleting an object removes its row (as RelStorage does), so no poll can
// list the deletion. relstore records the TID of the last commit that deleted anything
// (table relstore_hf_deletion, a migration); zap_all counts down below zero there
// (-1, -2, …), so that every zap moves the record too. Databases without the table (not
// migrated) poll as before.
// History-preserving: the first transaction's TID. A zap followed by a commit leaves a
// last TID above the one an instance saw, and only the history's new start shows it.
//
// A poll that sees its mark move reports "everything changed".
#pragma once

#include <optional>

#include "relstore/types.h"

namespace relstore::backend {

// The name of the one-row table; its row has id 0 and the TID.
inline constexpr const char* kDeletionMarkTable = "relstore_hf_deletion";

// What zap_all does to the record: the first zap after a deletion makes it -1, each
// later one one less.
inline constexpr const char* kZapDeletionMark =
    "UPDATE relstore_hf_deletion SET tid = CASE WHEN tid > 0 THEN -1 ELSE tid - 1 END "
    "WHERE id = 0";

// The TID a deletion record holds: none (zero) while it holds a zap count.
inline Tid deletion_tid(Tid record) { return record.sql() > 0 ? record : Tid(); }

// What one load connection knows of its mark.
class PollMark {
 public:
  // `mark`: the mark as the new snapshot sees it (none where the dialect reads none).
  // True when it moved since the previous snapshot of this connection, or, on its first
  // snapshot, when it is past `since`.
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
