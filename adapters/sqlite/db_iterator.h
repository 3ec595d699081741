// Transaction iteration over a snapshot of its own connection.
#pragma once

#include <memory>

#include "adapters/sqlite/adapter.h"

namespace relstore::sqlite {

class SqliteIterator : public TransactionIterator {
 public:
  SqliteIterator(const Location& loc, std::optional<Tid> start, std::optional<Tid> stop);
  ~SqliteIterator() override;
  bool next(TransactionRecord& out) override;

 private:
  std::unique_ptr<Db> db_;
  std::unique_ptr<Stmt> txns_;
  std::unique_ptr<Stmt> records_;
  bool hp_;  // records carry data_txn (kIterRecordsHp)
  bool done_ = false;
};

}  // namespace relstore::sqlite
