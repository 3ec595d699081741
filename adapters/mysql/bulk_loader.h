// History-preserving bulk loads for `relstore convert` into MySQL/MariaDB.
#pragma once

#include <memory>
#include <span>

#include "adapters/mysql/adapter.h"
#include "adapters/mysql/oid_allocator.h"

namespace relstore::mysql {

// Writes batches of whole transactions, each batch one database transaction, with
// multi-row INSERTs bounded by max_allowed_packet: what restore would write (prev_tid
// from current_object, the MD5 of each state, is_empty, packed), without the per-commit
// procedures and locks.
class BulkLoader {
 public:
  BulkLoader(const Settings& settings, backend::Adapter& counter);
  ~BulkLoader();

  void restore(std::span<const TransactionRecord> transactions);
  bool healthy() const { return conn_->healthy(); }

 private:
  const Settings& settings_;
  std::unique_ptr<Connection> conn_;
  OidAllocator oids_;
};

}  // namespace relstore::mysql
