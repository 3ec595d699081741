// Bulk loads for `relstore convert` into a SQLite database.
#pragma once

#include <memory>
#include <span>

#include "adapters/sqlite/adapter.h"
#include "adapters/sqlite/bulk_lock.h"

namespace relstore::sqlite {

// Writes batches of records or whole transactions, each batch one database transaction.
// While it exists it runs the database with a rollback journal instead of the WAL when
// it is the only connection: in WAL mode every page is written twice (to the WAL, then
// by the checkpoint), while a rollback journal skips pages the file did not have before
// the transaction — nearly all of them in a load. Both modes are atomic and durable; the
// WAL comes back when the load ends (and at the next writable open after a crash).
class BulkLoader {
 public:
  explicit BulkLoader(const Location& loc);
  ~BulkLoader();

  // `expected_last`: Adapter::bulk_apply_current.
  void apply_current(std::span<const backend::BulkRecord> records,
                     std::optional<Tid> expected_last);
  void restore(std::span<const TransactionRecord> transactions, std::optional<Tid> expected_last);

 private:
  // Runs `body` in BEGIN IMMEDIATE … COMMIT, then moves the OID allocator past `highest`;
  // first checks, under that write lock, that the newest finished TID is `expected_last`.
  template <class F>
  void in_transaction(std::optional<Tid> expected_last, F&& body);

  const Location& loc_;
  BulkLock lock_;  // held for the loader's life; released after db_ closes
  std::unique_ptr<Db> db_;
  bool journal_switched_ = false;
  Oid highest_;
};

}  // namespace relstore::sqlite
