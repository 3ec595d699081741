#include "adapters/postgresql/db_iterator.h"

#include <limits>

namespace relstore::postgresql {
namespace {

constexpr int64_t kBatch = 500;

}  // namespace

PgIterator::PgIterator(const Location& loc, backend::Adapter& adapter, std::optional<Tid> start,
                       std::optional<Tid> stop)
    : conn_(open_conn(loc, Role::iterator, &adapter)),
      q_(queries(loc.keep_history)),
      hp_(loc.keep_history),
      after_(start ? start->sql() - 1 : -1),
      stop_(stop ? stop->sql() : std::numeric_limits<int64_t>::max()) {
  // The snapshot starts now, at creation, not at the first next().
  conn_->simple("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1", Context::read);
  conn_->prepare({q_.iter_transactions, hp_ ? kIterRecordsHp : kIterRecords});
}

PgIterator::~PgIterator() { conn_->rollback_quietly(); }

void PgIterator::fetch_batch() {
  const Result r = conn_->run(q_.iter_transactions,
                              Params().int64(after_).int64(stop_).int64(kBatch), Context::read);
  for (int i = 0; i < r.rows(); ++i) {
    TransactionRecord t;
    t.tid = Tid::from_sql(r.int64(i, 0));
    t.status = r.int64(i, 1) ? 'p' : ' ';
    t.user = r.bytes(i, 2);
    t.description = r.bytes(i, 3);
    t.extension = r.bytes(i, 4);
    batch_.push_back(std::move(t));
  }
  if (r.rows() < kBatch) exhausted_ = true;
  if (!batch_.empty()) after_ = batch_.back().tid.sql();
}

bool PgIterator::next(TransactionRecord& out) {
  if (batch_.empty() && !exhausted_) fetch_batch();
  if (batch_.empty()) return false;
  out = std::move(batch_.front());
  batch_.pop_front();
  const Result r =
      conn_->run(hp_ ? kIterRecordsHp : kIterRecords, Params().int64(out.tid.sql()), Context::read);
  for (int i = 0; i < r.rows(); ++i) {
    DataRecord rec{Oid::from_sql(r.int64(i, 0)), out.tid, r.optional_bytes(i, 1), std::nullopt};
    if (hp_ && !r.is_null(i, 2)) rec.data_txn = Tid::from_sql(r.int64(i, 2));
    out.records.push_back(std::move(rec));
  }
  return true;
}

}  // namespace relstore::postgresql
