#include "adapters/postgresql/load_connection.h"

#include "backend/history_entry.h"
#include "relstore/errors.h"

namespace relstore::postgresql {

PgLoadConnection::PgLoadConnection(const Location& loc, backend::Adapter& adapter)
    : loc_(loc), adapter_(adapter), q_(queries(loc.keep_history)) {
  connect();
}

PgLoadConnection::~PgLoadConnection() { end_snapshot(); }

const Statement* PgLoadConnection::mark_statement() const {
  if (loc_.deletion_mark) return &kDeletionMark;
  return loc_.keep_history ? &kFirstTransaction : nullptr;
}

void PgLoadConnection::connect() {
  conn_.reset();
  in_snapshot_ = false;
  auto conn = open_conn(loc_, Role::load, &adapter_);
  // mark_ stays: it is what this instance saw, which the new connection's first poll
  // compares with (a history replaced meanwhile shows only there).
  conn->prepare({q_.last_tid, q_.poll, q_.load_current, q_.load_before, q_.history,
                 q_.current_records, q_.records_before, kLoadRevision, kExists});
  if (const Statement* mark = mark_statement()) conn->prepare({*mark});
  if (loc_.keep_history) conn->prepare({kTipKept, kUndoableTransactions, kIterRecords});
  conn->enter_pipeline();
  conn_ = std::move(conn);
}

backend::PollResult PgLoadConnection::begin_snapshot(std::optional<Tid> since) {
  if (!conn_ || !conn_->ok()) connect();
  try {
    return try_begin_snapshot(since);
  } catch (const DisconnectedError&) {
    // Nothing has been read in the new snapshot yet, so a connection the server dropped
    // while we were idle can be replaced without the application noticing.
    connect();
    return try_begin_snapshot(since);
  }
}

backend::PollResult PgLoadConnection::try_begin_snapshot(std::optional<Tid> since) {
  if (in_snapshot_) conn_->queue(kRollback);
  conn_->queue(kBeginSnapshot);
  // From here a transaction may be open, also when a statement below fails (a timeout, a
  // cancel) and leaves it aborted: the next snapshot must roll it back first, or every
  // BEGIN after it would fail with "current transaction is aborted".
  in_snapshot_ = true;
  conn_->queue(q_.last_tid);
  if (since) conn_->queue(q_.poll, Params().int64(since->sql()));
  const Statement* mark_query = mark_statement();
  if (mark_query) conn_->queue(*mark_query);
  const bool check_tip = loc_.keep_history && !mark_.tip().is_zero();
  if (check_tip) conn_->queue(kTipKept, Params().int64(mark_.tip().sql()));
  conn_->send_batch();
  const auto results = conn_->wait(Context::read);
  // Ours are the last results: last TID, changes, mark, tip (those queued).
  size_t at = results.size() - 1 - (since ? 1 : 0) - (mark_query ? 1 : 0) - (check_tip ? 1 : 0);
  backend::PollResult r;
  r.last_tid = Tid::from_sql(results[at++].int64(0, 0));
  const Result* changes = since ? &results[at++] : nullptr;
  std::optional<Tid> mark;
  if (mark_query) mark = Tid::from_sql(results[at++].int64(0, 0));
  const bool tip_kept = !check_tip || results[at++].int64(0, 0) == 1;
  if (loc_.deletion_mark) r.last_tid = mark_.last_finished(r.last_tid, *mark);
  if (changes) {
    r.changes.emplace();
    r.changes->reserve(static_cast<size_t>(changes->rows()));
    for (int i = 0; i < changes->rows(); ++i) {
      r.changes->emplace_back(Oid::from_sql(changes->int64(i, 0)),
                              Tid::from_sql(changes->int64(i, 1)));
    }
  }
  r.mark = mark;
  if (mark_.moved(mark, since, tip_kept)) r.changes.reset();  // deleted rows, a zap
  mark_.set_tip(r.last_tid);
  return r;
}

void PgLoadConnection::end_snapshot() noexcept {
  if (!in_snapshot_ || !conn_) return;
  in_snapshot_ = false;
  try {
    // Sent now, read later: no round trip.
    conn_->queue(kRollback);
    conn_->send_batch();
  } catch (...) {
    conn_.reset();  // the next snapshot reconnects
  }
}

Result PgLoadConnection::run(const Statement& s, const Params& p) {
  if (!conn_) throw DisconnectedError(loc_.connect.describe + ": no snapshot is open");
  return conn_->run(s, p, Context::read);
}

std::optional<backend::StateRow> PgLoadConnection::load_current(Oid oid) {
  const Result r = run(q_.load_current, Params().int64(oid.sql()));
  if (!r.rows()) return std::nullopt;
  return backend::StateRow{Tid::from_sql(r.int64(0, 0)), r.optional_bytes(0, 1)};
}

std::optional<backend::StateRow> PgLoadConnection::load_revision(Oid oid, Tid tid) {
  const Result r = run(kLoadRevision, Params().int64(oid.sql()).int64(tid.sql()));
  if (!r.rows()) return std::nullopt;
  return backend::StateRow{Tid::from_sql(r.int64(0, 0)), r.optional_bytes(0, 1)};
}

bool PgLoadConnection::load_blob(Oid oid, Tid tid, const backend::BlobSink& sink) {
  const auto piece_size = static_cast<int64_t>(backend::kBlobPiece);
  const Result chunks =
      run(kLoadBlob, Params().int64(oid.sql()).int64(tid.sql()).int64(piece_size));
  for (int i = 0; i < chunks.rows(); ++i) {
    const int64_t lo = chunks.int64(i, 0);
    std::string bytes = chunks.bytes(i, 1);
    for (int64_t at = piece_size;; at += piece_size) {
      sink(bytes);
      if (bytes.size() < backend::kBlobPiece) break;
      bytes = run(kReadLargeObject, Params().int64(lo).int64(at).int64(piece_size)).bytes(0, 0);
    }
  }
  return chunks.rows() > 0;
}

std::optional<backend::BeforeRow> PgLoadConnection::load_before(Oid oid, Tid tid) {
  const Result r = run(q_.load_before, Params().int64(oid.sql()).int64(tid.sql()));
  if (!r.rows()) return std::nullopt;
  backend::BeforeRow out{Tid::from_sql(r.int64(0, 0)), r.optional_bytes(0, 1), std::nullopt};
  if (!r.is_null(0, 2)) out.end = Tid::from_sql(r.int64(0, 2));
  return out;
}

bool PgLoadConnection::exists(Oid oid) {
  return run(kExists, Params().int64(oid.sql())).rows() > 0;
}

namespace {

// Rows of tid, size, user, description, extension.
std::vector<HistoryEntry> history_entries(const Result& r) {
  std::vector<HistoryEntry> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(backend::history_entry(r.int64(i, 0), r.int64(i, 1), r.bytes(i, 2), r.bytes(i, 3),
                                         r.bytes(i, 4)));
  }
  return out;
}

}  // namespace

std::vector<HistoryEntry> PgLoadConnection::history(Oid oid, size_t size) {
  return history_entries(
      run(q_.history, Params().int64(oid.sql()).int64(static_cast<int64_t>(size))));
}

std::vector<HistoryEntry> PgLoadConnection::undoable_transactions(Tid below, size_t limit) {
  return history_entries(
      run(kUndoableTransactions, Params().int64(below.sql()).int64(static_cast<int64_t>(limit))));
}

std::vector<std::pair<Oid, std::optional<Bytes>>> PgLoadConnection::transaction_records(Tid tid) {
  const Result r = run(kIterRecords, Params().int64(tid.sql()));
  std::vector<std::pair<Oid, std::optional<Bytes>>> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.emplace_back(Oid::from_sql(r.int64(i, 0)), r.optional_bytes(i, 1));
  }
  return out;
}

std::vector<std::pair<Oid, backend::StateRow>> PgLoadConnection::current_records(
    Oid from, std::optional<Tid> before, size_t limit) {
  Params p;
  p.int64(from.sql());
  if (before) p.int64(before->sql());
  p.int64(static_cast<int64_t>(limit));
  const Result r = run(before ? q_.records_before : q_.current_records, p);
  std::vector<std::pair<Oid, backend::StateRow>> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.emplace_back(Oid::from_sql(r.int64(i, 0)),
                     backend::StateRow{Tid::from_sql(r.int64(i, 1)), r.optional_bytes(i, 2)});
  }
  return out;
}

}  // namespace relstore::postgresql
