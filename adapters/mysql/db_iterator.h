// Transaction iteration over a snapshot of its own connection.
#pragma once

#include <deque>
#include <memory>

#include "adapters/mysql/adapter.h"

namespace relstore::mysql {

// Reads transactions a page at a time (a MySQL connection cannot interleave queries with
// an unread result), all within one REPEATABLE READ snapshot taken at creation.
class MysqlIterator : public TransactionIterator {
 public:
  MysqlIterator(const Settings& settings, std::optional<Tid> start, std::optional<Tid> stop);
  ~MysqlIterator() override;
  bool next(TransactionRecord& out) override;

 private:
  void fetch_page();

  const Settings& settings_;
  std::unique_ptr<Connection> conn_;
  int64_t next_start_;
  int64_t stop_;
  std::deque<TransactionRecord> page_;
  bool exhausted_ = false;
};

}  // namespace relstore::mysql
