#include "relstore/copy.h"

namespace relstore {

CopyStats copy_transactions(StorageInstance& src, StorageInstance& dst, std::optional<Tid> start,
                            const std::function<void(const CopyStats&)>& progress) {
  CopyStats stats;
  auto it = src.iterator(start, std::nullopt);
  TransactionRecord txn;
  while (it->next(txn)) {
    const TransactionMetaData meta{txn.user, txn.description, txn.extension};
    dst.tpc_begin(meta, txn.tid, txn.status);
    try {
      for (const DataRecord& r : txn.records) {
        dst.restore(r.oid, txn.tid, r.data, meta);
        ++stats.records;
        if (r.data) stats.bytes += r.data->size();
      }
      dst.tpc_vote(meta);
      dst.tpc_finish(meta);
    } catch (...) {
      dst.tpc_abort(meta);
      throw;
    }
    ++stats.transactions;
    if (progress) progress(stats);
  }
  return stats;
}

}  // namespace relstore
