// Transaction iteration over a snapshot of its own connection.
#pragma once

#include <deque>
#include <memory>

#include "adapters/postgresql/adapter.h"
#include "adapters/postgresql/queries.h"

namespace relstore::postgresql {

// Reads transactions in batches (so a database of millions of transactions is not held in
// memory) and each transaction's records when it is reached.
class PgIterator : public TransactionIterator {
 public:
  PgIterator(const Location& loc, backend::Adapter& adapter, std::optional<Tid> start,
             std::optional<Tid> stop);
  ~PgIterator() override;
  bool next(TransactionRecord& out) override;

 private:
  void fetch_batch();

  std::unique_ptr<Conn> conn_;
  const Queries& q_;
  bool hp_;        // records carry data_txn (kIterRecordsHp)
  int64_t after_;  // the last TID read (start - 1 at first)
  int64_t stop_;
  std::deque<TransactionRecord> batch_;
  bool exhausted_ = false;
};

}  // namespace relstore::postgresql
