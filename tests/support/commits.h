// Small commits that tests of several backends make the same way.
#pragma once

#include <string>
#include <vector>

#include "relstore/storage.h"
#include "sample/records.h"

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

// A record that references `children` (a PersistentMapping), for tests of pack's
// garbage collection.
inline std::string mapping_of(const std::vector<uint64_t>& children) {
  std::vector<sample::Child> c;
  for (const uint64_t oid : children) {
    c.push_back({"c" + std::to_string(oid), Oid(oid), sample::kPersistentMapping});
  }
  return sample::mapping_record(c);
}

}  // namespace relstore::testing
