#include "adapters/mysql/db_iterator.h"

#include <limits>

#include "adapters/mysql/queries.h"

namespace relstore::mysql {
namespace {

constexpr int64_t kPage = 500;

}  // namespace

MysqlIterator::MysqlIterator(const Settings& settings, std::optional<Tid> start,
                             std::optional<Tid> stop)
    : settings_(settings),
      conn_(open_connection(settings, Role::inspect, nullptr)),
      next_start_(start ? start->sql() : 0),
      stop_(stop ? stop->sql() : std::numeric_limits<int64_t>::max()) {
  // The snapshot begins now, not at the first next().
  conn_->exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", Context::read);
}

MysqlIterator::~MysqlIterator() {
  if (conn_->healthy()) conn_->rollback();
}

void MysqlIterator::fetch_page() {
  const char* sql = queries(settings_.keep_history).iter_transactions;
  int64_t rows = 0;
  conn_->prepared(sql).bind(1, next_start_).bind(2, stop_).bind(3, kPage).query([&](Rows& r) {
    while (r.next()) {
      TransactionRecord t;
      t.tid = Tid::from_sql(r.int64(0));
      t.status = r.int64(1) ? 'p' : ' ';
      t.user = r.bytes(2);
      t.description = r.bytes(3);
      t.extension = r.bytes(4);
      page_.push_back(std::move(t));
      ++rows;
    }
  });
  if (rows < kPage) exhausted_ = true;
  if (!page_.empty()) next_start_ = page_.back().tid.sql() + 1;
}

bool MysqlIterator::next(TransactionRecord& out) {
  if (page_.empty() && !exhausted_) fetch_page();
  if (page_.empty()) return false;
  out = std::move(page_.front());
  page_.pop_front();
  const bool hp = settings_.keep_history;  // records carry data_txn (kIterRecordsHp)
  conn_->prepared(hp ? kIterRecordsHp : kIterRecords).bind(1, out.tid.sql()).query([&](Rows& r) {
    while (r.next()) {
      DataRecord rec{Oid::from_sql(r.int64(0)), out.tid, r.optional_bytes(1), std::nullopt};
      if (hp && !r.is_null(2)) rec.data_txn = Tid::from_sql(r.int64(2));
      out.records.push_back(std::move(rec));
    }
  });
  return true;
}

}  // namespace relstore::mysql
