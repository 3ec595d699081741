#include "adapters/sqlite/db_iterator.h"

#include <limits>

#include "adapters/sqlite/queries.h"

namespace relstore::sqlite {

SqliteIterator::SqliteIterator(const Location& loc, std::optional<Tid> start,
                               std::optional<Tid> stop)
    : db_(open_main(loc, Role::inspect)), hp_(loc.keep_history) {
  db_->exec("BEGIN DEFERRED");
  // Read once now so the snapshot is the one current at creation, not at the first next().
  db_->query_int("SELECT COUNT(*) FROM commit_row_lock");
  txns_ = std::make_unique<Stmt>(db_->handle(), queries(loc.keep_history).iter_transactions, false);
  records_ = std::make_unique<Stmt>(db_->handle(), hp_ ? kIterRecordsHp : kIterRecords, false);
  txns_->bind(1, start ? start->sql() : 0);
  txns_->bind(2, stop ? stop->sql() : std::numeric_limits<int64_t>::max());
}

SqliteIterator::~SqliteIterator() {
  records_.reset();
  txns_.reset();
  db_->rollback_quietly();  // ending a read transaction cannot lose anything
}

bool SqliteIterator::next(TransactionRecord& out) {
  if (done_ || !txns_->step()) {
    done_ = true;
    return false;
  }
  out = TransactionRecord{};
  out.tid = Tid::from_sql(txns_->int64(0));
  out.status = txns_->int64(1) ? 'p' : ' ';
  out.user = txns_->blob(2);
  out.description = txns_->blob(3);
  out.extension = txns_->blob(4);
  StmtScope scope(*records_);
  records_->bind(1, out.tid.sql());
  while (records_->step()) {
    DataRecord r{Oid::from_sql(records_->int64(0)), out.tid, records_->optional_blob(1),
                 std::nullopt};
    if (hp_ && !records_->is_null(2)) r.data_txn = Tid::from_sql(records_->int64(2));
    out.records.push_back(std::move(r));
  }
  return true;
}

}  // namespace relstore::sqlite
