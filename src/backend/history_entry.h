// One entry of history() or undoLog() from the columns every dialect selects for it
// (tid, size, user, description, extension).
#pragma once

#include <cstdint>
#include <utility>

#include "relstore/storage.h"
#include "relstore/timestamp.h"

namespace relstore::backend {

// The time is the TID's own, as FileStorage reports it; the row stores no other.
inline HistoryEntry history_entry(int64_t tid, int64_t size, Bytes user, Bytes description,
                                  Bytes extension) {
  HistoryEntry e;
  e.tid = Tid::from_sql(tid);
  e.time = TimeStamp(e.tid).unix_time();
  e.size = static_cast<uint64_t>(size);
  e.user = std::move(user);
  e.description = std::move(description);
  e.extension = std::move(extension);
  return e;
}

}  // namespace relstore::backend
