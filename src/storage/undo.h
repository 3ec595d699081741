// Undo's decisions, the same on every backend: which transactions undo_log lists, and what
// state undoing a transaction gives each of its objects (conformance.md lines 22-25).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "relstore/storage.h"

namespace relstore::undo {

// Up to `limit` transactions older than `below` that can be undone, newest first.
using Page = std::function<std::vector<HistoryEntry>(Tid below, size_t limit)>;

// StorageInstance::undo_log over a backend's pages.
std::vector<UndoInfo> log(int64_t first, int64_t last, const UndoFilter& filter, const Page& page);

// One object of the transaction being undone.
struct Revisions {
  Oid oid;
  std::optional<Bytes> undone;   // the state the transaction wrote; none: absent
  std::optional<Bytes> before;   // the state just before it; none: absent or not yet created
  std::optional<Bytes> current;  // the state now (in this commit); none: absent
  Tid current_tid;
};

// The state undoing transaction `undone_tid` gives the object: the one before it when the
// object still has the state the transaction wrote, else what `resolver` merges (ZODB's
// rule: old = the undone state, committed = the current one, new = the one before).
// Throws UndoError naming the object when neither holds, and for the root's creation.
std::optional<Bytes> state_after(const Revisions& r, Tid undone_tid,
                                 const ConflictResolver& resolver);

}  // namespace relstore::undo
