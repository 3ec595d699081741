// A restore's TID (tpc_begin with a TID, restore, convert) must come after the newest
// finished one: polls ask for what is newer than what they saw, so a commit at or before
// it would never reach them, and last_transaction() would step back (conformance.md
// lines 2 and 13). Each backend checks under its write or commit lock; this is the error.
#pragma once

#include <string>

#include "relstore/errors.h"
#include "relstore/types.h"

namespace relstore::backend {

inline StorageTransactionError tid_not_after(Tid given, Tid last, const std::string& database) {
  return StorageTransactionError("cannot restore transaction " + given.hex() + " into " + database +
                                 ": it is not after the last transaction " + last.hex() +
                                 " (TIDs must increase)");
}

}  // namespace relstore::backend
