#include "adapters/mysql/load_connection.h"

#include "backend/history_entry.h"
#include "relstore/errors.h"

namespace relstore::mysql {

MysqlLoadConnection::MysqlLoadConnection(const Settings& settings, backend::Adapter& adapter,
                                         SnapshotCloser& closer)
    : settings_(settings), adapter_(adapter), closer_(closer), q_(queries(settings.keep_history)) {}

// Closing the connection ends any transaction on the server; no ROLLBACK needed.
MysqlLoadConnection::~MysqlLoadConnection() { reclaim(); }

void MysqlLoadConnection::reclaim() {
  if (!handed_over_) return;
  handed_over_ = false;
  // Waiting for the closer's ROLLBACK reply is a round trip this thread waited for.
  if (closer_.take_back(*conn_)) adapter_.count_round_trip();
}

Connection& MysqlLoadConnection::conn() {
  reclaim();
  if (!conn_ || !conn_->healthy()) {
    throw DisconnectedError(settings_.connect.describe +
                            ": the snapshot's connection was lost; the next poll reconnects");
  }
  return *conn_;
}

backend::PollResult MysqlLoadConnection::begin_snapshot(std::optional<Tid> since) {
  reclaim();
  in_snapshot_ = false;
  if (conn_ && conn_->healthy()) {
    try {
      return start(since);
    } catch (const DisconnectedError&) {
      // The connection died while idle (server restart, wait_timeout, KILL). Nothing of
      // the old snapshot is needed any more, so the new one simply starts on a new
      // connection.
    }
  }
  // mark_ stays: it is what this instance saw, which the new connection's first poll
  // compares with (a history replaced meanwhile shows only there).
  conn_ = open_connection(settings_, Role::load, &adapter_);
  return start(since);
}

backend::PollResult MysqlLoadConnection::start(std::optional<Tid> since) {
  // One round trip: start the new snapshot (START TRANSACTION ends an open one), read its
  // last TID and what changed since the previous one.
  std::string sql = "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; ";
  sql += q_.last_tid;
  int statements = 2;
  // The poll's mark (backend/deletion_mark.h).
  const char* mark_query = settings_.has_deletion_mark ? kDeletionMark
                           : settings_.keep_history    ? kFirstTransaction
                                                       : nullptr;
  if (mark_query) {
    sql += "; ";
    sql += mark_query;
    ++statements;
  }
  const bool check_tip = settings_.keep_history && !mark_.tip().is_zero();
  if (check_tip) {
    sql += "; " + tip_kept_sql(mark_.tip());
    ++statements;
  }
  if (since) {
    sql += "; ";
    sql += q_.poll;
    sql += std::to_string(since->sql());
    ++statements;
  }
  backend::PollResult r;
  std::optional<Tid> mark;
  bool tip_kept = true;
  int result = 0;
  // From here a transaction may be open, also when a statement below fails: end_snapshot
  // must end it.
  in_snapshot_ = true;
  conn_->batch(
      sql, statements,
      [&](Rows& rows) {
        const int n = result++;
        if (n == 0) {
          if (rows.next()) r.last_tid = Tid::from_sql(rows.int64(0));
          return;
        }
        if (n == 1 && mark_query) {
          mark = rows.next() ? Tid::from_sql(rows.int64(0)) : Tid();
          return;
        }
        if (n == 1 + (mark_query ? 1 : 0) && check_tip) {
          tip_kept = rows.next() && rows.int64(0) == 1;
          return;
        }
        r.changes.emplace();
        while (rows.next())
          r.changes->emplace_back(Oid::from_sql(rows.int64(0)), Tid::from_sql(rows.int64(1)));
      },
      Context::read);
  if (since && !r.changes) r.changes.emplace();
  if (settings_.has_deletion_mark) r.last_tid = mark_.last_finished(r.last_tid, *mark);
  r.mark = mark;
  if (mark_.moved(mark, since, tip_kept)) r.changes.reset();  // deleted rows, a zap
  mark_.set_tip(r.last_tid);
  return r;
}

void MysqlLoadConnection::end_snapshot() noexcept {
  if (!in_snapshot_) return;
  in_snapshot_ = false;
  if (conn_ && conn_->healthy()) {
    closer_.end_later(*conn_);
    handed_over_ = true;
  }
}

std::optional<backend::StateRow> MysqlLoadConnection::load_current(Oid oid) {
  std::optional<backend::StateRow> out;
  conn().prepared(q_.load_current).bind(1, oid.sql()).query([&](Rows& r) {
    if (r.next()) out = backend::StateRow{Tid::from_sql(r.int64(0)), r.optional_bytes(1)};
  });
  return out;
}

std::optional<backend::StateRow> MysqlLoadConnection::load_revision(Oid oid, Tid tid) {
  std::optional<backend::StateRow> out;
  conn().prepared(kLoadRevision).bind(1, oid.sql()).bind(2, tid.sql()).query([&](Rows& r) {
    if (r.next()) out = backend::StateRow{Tid::from_sql(r.int64(0)), r.optional_bytes(1)};
  });
  return out;
}

bool MysqlLoadConnection::load_blob(Oid oid, Tid tid, const backend::BlobSink& sink) {
  bool found = false;
  for (int64_t from = 0;;) {
    int64_t rows = 0;
    conn()
        .prepared(kLoadBlob)
        .bind(1, oid.sql())
        .bind(2, tid.sql())
        .bind(3, from)
        .query([&](Rows& r) {
          while (r.next()) {
            ++rows;
            from = r.int64(0) + 1;
            sink(r.bytes(1));
          }
        });
    found = found || rows > 0;
    if (rows < kBlobChunksPerPage) return found;
  }
}

std::optional<backend::BeforeRow> MysqlLoadConnection::load_before(Oid oid, Tid tid) {
  std::optional<backend::BeforeRow> out;
  conn().prepared(q_.load_before).bind(1, oid.sql()).bind(2, tid.sql()).query([&](Rows& r) {
    if (!r.next()) return;
    out = backend::BeforeRow{Tid::from_sql(r.int64(0)), r.optional_bytes(1), std::nullopt};
    if (!r.is_null(2)) out->end = Tid::from_sql(r.int64(2));
  });
  return out;
}

bool MysqlLoadConnection::exists(Oid oid) {
  bool out = false;
  conn().prepared(kExists).bind(1, oid.sql()).query([&](Rows& r) { out = r.next(); });
  return out;
}

namespace {

// Rows of tid, size, user, description, extension.
std::vector<HistoryEntry> history_entries(Rows& r) {
  std::vector<HistoryEntry> out;
  while (r.next()) {
    out.push_back(
        backend::history_entry(r.int64(0), r.int64(1), r.bytes(2), r.bytes(3), r.bytes(4)));
  }
  return out;
}

}  // namespace

std::vector<HistoryEntry> MysqlLoadConnection::history(Oid oid, size_t size) {
  std::vector<HistoryEntry> out;
  conn()
      .prepared(q_.history)
      .bind(1, oid.sql())
      .bind(2, static_cast<int64_t>(size))
      .query([&](Rows& r) { out = history_entries(r); });
  return out;
}

std::vector<HistoryEntry> MysqlLoadConnection::undoable_transactions(Tid below, size_t limit) {
  std::vector<HistoryEntry> out;
  conn()
      .prepared(kUndoableTransactions)
      .bind(1, below.sql())
      .bind(2, static_cast<int64_t>(limit))
      .query([&](Rows& r) { out = history_entries(r); });
  return out;
}

std::vector<std::pair<Oid, std::optional<Bytes>>> MysqlLoadConnection::transaction_records(
    Tid tid) {
  std::vector<std::pair<Oid, std::optional<Bytes>>> out;
  conn().prepared(kIterRecords).bind(1, tid.sql()).query([&](Rows& r) {
    while (r.next()) out.emplace_back(Oid::from_sql(r.int64(0)), r.optional_bytes(1));
  });
  return out;
}

std::vector<std::pair<Oid, backend::StateRow>> MysqlLoadConnection::current_records(
    Oid from, std::optional<Tid> before, size_t limit) {
  std::vector<std::pair<Oid, backend::StateRow>> out;
  auto& s = conn().prepared(before ? q_.records_before : q_.current_records).bind(1, from.sql());
  if (before) s.bind(2, before->sql());
  s.bind(before ? 3 : 2, static_cast<int64_t>(limit)).query([&](Rows& r) {
    while (r.next()) {
      out.emplace_back(Oid::from_sql(r.int64(0)),
                       backend::StateRow{Tid::from_sql(r.int64(1)), r.optional_bytes(2)});
    }
  });
  return out;
}

}  // namespace relstore::mysql
