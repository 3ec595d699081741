#include "adapters/sqlite/store_connection.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "adapters/sqlite/errors.h"
#include "adapters/sqlite/json_mirror.h"
#include "adapters/sqlite/queries.h"
#include "backend/deletion_mark.h"
#include "backend/forced_tid.h"
#include "relstore/errors.h"
#include "relstore/timestamp.h"

namespace relstore::sqlite {
namespace {

constexpr const char* kInsertTemp =
    "INSERT INTO temp_store (zoid, prev_tid, md5, state) VALUES (?, ?, ?, ?)";
constexpr const char* kReplaceTemp =
    "UPDATE temp_store SET prev_tid = ?, md5 = ?, state = ? WHERE zoid = ?";
constexpr const char* kMoveHp =
    "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) "
    "SELECT t.zoid, ?1, COALESCE(c.tid, 0), t.md5, COALESCE(LENGTH(t.state), 0), t.state "
    "FROM temp_store t LEFT JOIN current_object c ON c.zoid = t.zoid ORDER BY t.zoid";
constexpr const char* kCurrentHp =
    "INSERT INTO current_object (zoid, tid) SELECT zoid, ?1 FROM temp_store WHERE true "
    "ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid";
// Blob rows of an object whose state is replaced belong to the old state (RelStorage does
// the same); deleted objects lose theirs by cascade.
constexpr const char* kDropBlobsHf =
    "DELETE FROM blob_chunk WHERE zoid IN (SELECT zoid FROM temp_store)";
constexpr const char* kDeleteHf =
    "DELETE FROM object_state WHERE zoid IN (SELECT zoid FROM temp_store WHERE state IS NULL)";
constexpr const char* kMoveHf =
    "INSERT INTO object_state (zoid, tid, state_size, state) "
    "SELECT zoid, ?1, LENGTH(state), state FROM temp_store WHERE state IS NOT NULL "
    "ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, state_size = excluded.state_size, "
    "state = excluded.state";

}  // namespace

SqliteStoreConnection::SqliteStoreConnection(const Location& loc, backend::Adapter& adapter)
    : loc_(loc),
      describe_(adapter.describe()),
      db_(open_main(loc, Role::store)),
      q_(queries(loc.keep_history)),
      has_deletion_mark_(!loc.keep_history && db_->has_table(backend::kDeletionMarkTable)) {
  db_->exec(
      "CREATE TEMP TABLE IF NOT EXISTS temp_store (zoid INTEGER PRIMARY KEY NOT NULL, "
      "prev_tid INTEGER NOT NULL, md5 CHAR(32), state BLOB)");
}

SqliteStoreConnection::~SqliteStoreConnection() { rollback(); }

OidAllocator& SqliteStoreConnection::oids() {
  if (!oids_) oids_ = std::make_unique<OidAllocator>(loc_);
  return *oids_;
}

std::vector<Oid> SqliteStoreConnection::allocate_oids() { return oids().allocate(); }

void SqliteStoreConnection::set_min_oid(Oid oid) { oids().set_min(oid); }

void SqliteStoreConnection::upload(std::span<const backend::PendingRecord> records) {
  Stmt& s = db_->prepared(kInsertTemp);
  for (const auto& r : records) {
    StmtScope scope(s);
    s.bind(1, r.oid.sql()).bind(2, r.prev_tid.sql());
    if (!r.md5) {
      s.bind_null(3);
    } else {
      s.bind_text(3, *r.md5);  // hex text in a BLOB-declared column, as RelStorage stores it
    }
    if (r.state) {
      s.bind_state(4, *r.state, r.oid.value());
    } else {
      s.bind_null(4);
    }
    s.step();
  }
  record_count_ = records.size();
}

void SqliteStoreConnection::check_read_current(std::span<const backend::ReadCurrent> rc) {
  Stmt& s = db_->prepared(q_.current_tid);
  for (const auto& r : rc) {
    StmtScope scope(s);
    s.bind(1, r.oid.sql());
    const Tid current = s.step() ? Tid::from_sql(s.int64(0)) : Tid(0);
    if (current != r.serial) throw ReadConflictError(r.oid, std::make_pair(current, r.serial));
  }
}

std::vector<backend::ConflictRow> SqliteStoreConnection::vote(const backend::VoteRequest& req) {
  db_->set_busy_timeout(req.lock_timeout);
  try {
    db_->prepared("BEGIN IMMEDIATE").run();
  } catch (const DisconnectedError& e) {
    // Busy outside vote context is reported as a lost connection; here it is the lock.
    throw UnableToAcquireCommitLockError(e.what());
  }
  // A migration run while this process was up may have added the deletion record since
  // the connection looked: other processes' polls trust it from then on, so this commit's
  // deletions must move it. (Looked up under the write lock; migrations never remove it.)
  if (!has_deletion_mark_ && !loc_.keep_history) {
    has_deletion_mark_ = db_->has_table(backend::kDeletionMarkTable);
  }
  // Under the write lock, held until finish: no other commit can come in between.
  if (req.forced_tid) {
    const Tid last = last_finished_tid();
    if (*req.forced_tid <= last) throw backend::tid_not_after(*req.forced_tid, last, describe_);
  }
  // Read under the write lock, the mode cannot change before finish.
  mirror_in_commit_ = json_mirror::read_mode(*db_) == MirrorMode::in_commit;
  db_->prepared("DELETE FROM temp_store").run();
  upload(req.records);
  // The blobs are written at finish, which must not fail after a good vote: a file that
  // cannot be read fails here.
  for (const auto& b : req.blobs) {
    if (!std::ifstream(b.path, std::ios::binary)) {
      throw StorageError("cannot read blob file " + b.path + " of oid " + b.oid.hex());
    }
  }
  blobs_.assign(req.blobs.begin(), req.blobs.end());
  check_read_current(req.read_current);
  std::vector<backend::ConflictRow> out;
  if (req.check_conflicts) {
    Stmt& s = db_->prepared(q_.conflicts);
    StmtScope scope(s);
    while (s.step()) {
      out.push_back({Oid::from_sql(s.int64(0)), Tid::from_sql(s.int64(1)),
                     Tid::from_sql(s.int64(2)), s.optional_blob(3)});
    }
  }
  return out;
}

void SqliteStoreConnection::replace(std::span<const backend::PendingRecord> records) {
  Stmt& s = db_->prepared(kReplaceTemp);
  for (const auto& r : records) {
    StmtScope scope(s);
    s.bind(1, r.prev_tid.sql());
    if (!r.md5) {
      s.bind_null(2);
    } else {
      s.bind_text(2, *r.md5);
    }
    if (r.state) {
      s.bind_state(3, *r.state, r.oid.value());
    } else {
      s.bind_null(3);
    }
    s.bind(4, r.oid.sql());
    s.step();
  }
}

void SqliteStoreConnection::move(Tid tid) {
  if (loc_.keep_history) {
    db_->prepared(kMoveHp).bind(1, tid.sql()).run();
    db_->prepared(kCurrentHp).bind(1, tid.sql()).run();
  } else {
    db_->prepared(kDropBlobsHf).run();
    db_->prepared(kDeleteHf).run();
    // Polls cannot list removed rows: record that this commit removed some.
    if (db_->changes() > 0 && has_deletion_mark_) {
      db_->prepared(kMarkDeletion).bind(1, tid.sql()).run();
    }
    db_->prepared(kMoveHf).bind(1, tid.sql()).run();
  }
}

std::vector<uint64_t> blob_chunk_sizes(uint64_t size, uint64_t value_limit) {
  // A row holds the chunk and a few integers, and the limit bounds the whole row.
  const uint64_t most = value_limit > (2u << 20) ? value_limit - (1u << 20) : value_limit / 2;
  std::vector<uint64_t> out;
  do {
    out.push_back(std::min(most, size));
    size -= out.back();
  } while (size > 0);
  return out;
}

void SqliteStoreConnection::write_blobs(Tid tid) {
  if (blobs_.empty()) return;
  Stmt& s = db_->prepared(kInsertBlobChunk);
  const auto limit = static_cast<uint64_t>(sqlite3_limit(db_->handle(), SQLITE_LIMIT_LENGTH, -1));
  std::string piece;
  for (const auto& b : blobs_) {
    // Each chunk is inserted as zeros of its size, then filled from the file in pieces, so
    // the content never sits in memory whole.
    std::ifstream in(b.path, std::ios::binary);
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(b.path, ec);
    if (!in || ec) throw StorageError("cannot read blob file " + b.path);
    int64_t num = 0;
    for (const uint64_t bytes : blob_chunk_sizes(size, limit)) {
      {
        StmtScope scope(s);
        s.bind(1, b.oid.sql()).bind(2, tid.sql()).bind(3, num++).bind_zeroblob(4, bytes);
        s.step();
      }
      IncrementalBlob value(db_->handle(), "blob_chunk", "chunk",
                            sqlite3_last_insert_rowid(db_->handle()), true);
      for (uint64_t at = 0; at < bytes;) {
        piece.resize(static_cast<size_t>(std::min<uint64_t>(backend::kBlobPiece, bytes - at)));
        if (!in.read(piece.data(), static_cast<std::streamsize>(piece.size()))) {
          throw StorageError("cannot read blob file " + b.path + " (it shrank while stored?)");
        }
        value.write(at, piece);
        at += piece.size();
      }
    }
  }
  blobs_.clear();
}

Tid SqliteStoreConnection::last_finished_tid() {
  return newest_finished_tid(*db_, loc_.keep_history, has_deletion_mark_);
}

Tid SqliteStoreConnection::finish(const backend::FinishRequest& req) {
  const Tid tid = req.forced_tid ? *req.forced_tid : next_tid(req.now, last_finished_tid());
  if (loc_.keep_history) {
    Stmt& s = db_->prepared(kInsertTransaction);
    StmtScope scope(s);
    s.bind(1, tid.sql())
        .bind(2, req.status == 'p' ? 1 : 0)
        .bind(3, record_count_ == 0 ? 1 : 0)
        .bind_blob(4, req.meta->user)
        .bind_blob(5, req.meta->description)
        .bind_blob(6, req.meta->extension);
    s.step();
  }
  move(tid);
  write_blobs(tid);
  if (req.mirror) json_mirror::write_in_commit(*db_, *req.mirror, tid);
  db_->prepared("DELETE FROM temp_store").run();
  try {
    db_->prepared("COMMIT").run();
  } catch (const DisconnectedError& e) {
    throw UnableToAcquireCommitLockError(e.what());
  }
  return tid;
}

void SqliteStoreConnection::rollback() noexcept {
  record_count_ = 0;
  blobs_.clear();
  if (db_) db_->rollback_quietly();
}

}  // namespace relstore::sqlite
