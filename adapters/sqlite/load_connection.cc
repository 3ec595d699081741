#include "adapters/sqlite/load_connection.h"

#include "adapters/sqlite/json_mirror.h"
#include "backend/history_entry.h"

namespace relstore::sqlite {

SqliteLoadConnection::SqliteLoadConnection(const Location& loc, backend::Adapter&)
    : db_(open_main(loc, Role::load)),
      q_(queries(loc.keep_history)),
      keep_history_(loc.keep_history),
      has_deletion_mark_(!loc.keep_history && db_->has_table(backend::kDeletionMarkTable)) {}

SqliteLoadConnection::~SqliteLoadConnection() { end_snapshot(); }

template <class Read>
auto SqliteLoadConnection::read(Read&& body) -> decltype(body()) {
  if (snapshot_lost_) {
    throw StorageError("the read snapshot of " + db_->path() +
                       " ended after an earlier error; poll (sync) for a new one");
  }
  const bool in_snapshot = db_->in_transaction();
  try {
    return body();
  } catch (...) {
    if (in_snapshot && !db_->in_transaction()) snapshot_lost_ = true;
    throw;
  }
}

backend::PollResult SqliteLoadConnection::begin_snapshot(std::optional<Tid> since) {
  end_snapshot();
  db_->exec("BEGIN DEFERRED");
  // Added by a migration since the connection looked (store_connection.cc votes likewise).
  if (!has_deletion_mark_ && !keep_history_) {
    has_deletion_mark_ = db_->has_table(backend::kDeletionMarkTable);
  }
  backend::PollResult r;
  // The first read fixes the WAL snapshot.
  r.last_tid = Tid::from_sql(db_->query_int(q_.last_tid));
  std::optional<Tid> mark;
  if (has_deletion_mark_) {
    mark = Tid::from_sql(db_->query_int(kDeletionMark));
    r.last_tid = mark_.last_finished(r.last_tid, *mark);
  } else if (keep_history_) {
    mark = Tid::from_sql(db_->query_int(kFirstTransaction));
  }
  bool tip_kept = true;
  if (keep_history_ && !mark_.tip().is_zero()) {
    Stmt& s = db_->prepared(kTipKept);
    StmtScope scope(s);
    s.bind(1, mark_.tip().sql());
    tip_kept = s.step() && s.int64(0) == 1;
  }
  r.mirror_mode = json_mirror::read_mode(*db_);
  if (since) {
    r.changes.emplace();
    if (r.last_tid > *since) {
      Stmt& s = db_->prepared(q_.poll);
      StmtScope scope(s);
      s.bind(1, since->sql());
      while (s.step())
        r.changes->emplace_back(Oid::from_sql(s.int64(0)), Tid::from_sql(s.int64(1)));
    }
  }
  r.mark = mark;
  if (mark_.moved(mark, since, tip_kept)) r.changes.reset();  // deleted rows, a zap
  mark_.set_tip(r.last_tid);
  return r;
}

void SqliteLoadConnection::end_snapshot() noexcept {
  if (db_) db_->rollback_quietly();  // nothing to undo in a read transaction
  snapshot_lost_ = false;
}

std::optional<backend::StateRow> SqliteLoadConnection::load_current(Oid oid) {
  return read([&]() -> std::optional<backend::StateRow> {
    Stmt& s = db_->prepared(q_.load_current);
    StmtScope scope(s);
    s.bind(1, oid.sql());
    if (!s.step()) return std::nullopt;
    return backend::StateRow{Tid::from_sql(s.int64(0)), s.optional_blob(1)};
  });
}

std::optional<backend::StateRow> SqliteLoadConnection::load_revision(Oid oid, Tid tid) {
  return read([&]() -> std::optional<backend::StateRow> {
    Stmt& s = db_->prepared(kLoadRevision);
    StmtScope scope(s);
    s.bind(1, oid.sql()).bind(2, tid.sql());
    if (!s.step()) return std::nullopt;
    return backend::StateRow{Tid::from_sql(s.int64(0)), s.optional_blob(1)};
  });
}

bool SqliteLoadConnection::load_blob(Oid oid, Tid tid, const backend::BlobSink& sink) {
  return read([&] {
    std::vector<int64_t> rows;
    {
      Stmt& s = db_->prepared(kLoadBlob);
      StmtScope scope(s);
      s.bind(1, oid.sql()).bind(2, tid.sql());
      while (s.step()) rows.push_back(s.int64(0));
    }
    for (const int64_t row : rows) {
      IncrementalBlob(db_->handle(), "blob_chunk", "chunk", row, false)
          .read_all(backend::kBlobPiece, sink);
    }
    return !rows.empty();
  });
}

std::optional<backend::BeforeRow> SqliteLoadConnection::load_before(Oid oid, Tid tid) {
  return read([&]() -> std::optional<backend::BeforeRow> {
    Stmt& s = db_->prepared(q_.load_before);
    StmtScope scope(s);
    s.bind(1, oid.sql()).bind(2, tid.sql());
    if (!s.step()) return std::nullopt;
    backend::BeforeRow r{Tid::from_sql(s.int64(0)), s.optional_blob(1), std::nullopt};
    if (!s.is_null(2)) r.end = Tid::from_sql(s.int64(2));
    return r;
  });
}

bool SqliteLoadConnection::exists(Oid oid) {
  return read([&] {
    Stmt& s = db_->prepared(kExists);
    StmtScope scope(s);
    s.bind(1, oid.sql());
    return s.step();
  });
}

namespace {

// Rows of tid, size, user, description, extension.
std::vector<HistoryEntry> history_entries(Stmt& s) {
  std::vector<HistoryEntry> out;
  while (s.step()) {
    out.push_back(backend::history_entry(s.int64(0), s.int64(1), s.blob(2), s.blob(3), s.blob(4)));
  }
  return out;
}

}  // namespace

std::vector<HistoryEntry> SqliteLoadConnection::history(Oid oid, size_t size) {
  return read([&] {
    Stmt& s = db_->prepared(q_.history);
    StmtScope scope(s);
    s.bind(1, oid.sql()).bind(2, static_cast<int64_t>(size));
    return history_entries(s);
  });
}

std::vector<HistoryEntry> SqliteLoadConnection::undoable_transactions(Tid below, size_t limit) {
  return read([&] {
    Stmt& s = db_->prepared(kUndoableTransactions);
    StmtScope scope(s);
    s.bind(1, below.sql()).bind(2, static_cast<int64_t>(limit));
    return history_entries(s);
  });
}

std::vector<std::pair<Oid, std::optional<Bytes>>> SqliteLoadConnection::transaction_records(
    Tid tid) {
  return read([&] {
    Stmt& s = db_->prepared(kIterRecords);
    StmtScope scope(s);
    s.bind(1, tid.sql());
    std::vector<std::pair<Oid, std::optional<Bytes>>> out;
    while (s.step()) out.emplace_back(Oid::from_sql(s.int64(0)), s.optional_blob(1));
    return out;
  });
}

std::vector<std::pair<Oid, backend::StateRow>> SqliteLoadConnection::current_records(
    Oid from, std::optional<Tid> before, size_t limit) {
  return read([&] {
    Stmt& s = db_->prepared(before ? q_.records_before : q_.current_records);
    StmtScope scope(s);
    s.bind(1, from.sql());
    if (before) s.bind(2, before->sql());
    s.bind(before ? 3 : 2, static_cast<int64_t>(limit));
    std::vector<std::pair<Oid, backend::StateRow>> out;
    while (s.step()) {
      out.emplace_back(Oid::from_sql(s.int64(0)),
                       backend::StateRow{Tid::from_sql(s.int64(1)), s.optional_blob(2)});
    }
    return out;
  });
}

}  // namespace relstore::sqlite
