// Small commits that tests of several backends make the same way.
#pragma once

#include "relstore/storage.h"

namespace relstore::testing {

// Creates `oid` in one transaction and deletes it (delete_object) in the next; returns the
// deleting transaction's TID.
inline Tid create_then_delete(StorageInstance& inst, Oid oid) {
  TransactionMetaData txn{"", "", ""};
  inst.tpc_begin(txn);
  inst.store(oid, std::nullopt, "to be deleted", txn);
  inst.tpc_vote(txn);
  const Tid created = inst.tpc_finish(txn);
  TransactionMetaData del{"", "", ""};
  inst.tpc_begin(del);
  inst.delete_object(oid, created, del);
  inst.tpc_vote(del);
  return inst.tpc_finish(del);
}

}  // namespace relstore::testing
