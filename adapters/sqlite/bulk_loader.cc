#include "adapters/sqlite/bulk_loader.h"

#include <algorithm>

#include "adapters/sqlite/oid_allocator.h"
#include "adapters/sqlite/queries.h"
#include "backend/deletion_mark.h"
#include "md5.h"
#include "relstore/errors.h"

namespace relstore::sqlite {
namespace {

constexpr const char* kUpsertCurrent =
    "INSERT INTO object_state (zoid, tid, state_size, state) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, state_size = excluded.state_size, "
    "state = excluded.state";
constexpr const char* kDropBlobs = "DELETE FROM blob_chunk WHERE zoid = ?";
constexpr const char* kDeleteCurrent = "DELETE FROM object_state WHERE zoid = ?";
constexpr const char* kInsertRevision =
    "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) "
    "VALUES (?1, ?2, COALESCE((SELECT tid FROM current_object WHERE zoid = ?1), 0), ?3, ?4, ?5)";
constexpr const char* kMakeCurrent =
    "INSERT INTO current_object (zoid, tid) VALUES (?, ?) "
    "ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid";

}  // namespace

BulkLoader::BulkLoader(const Location& loc)
    : loc_(loc), lock_(loc), db_(open_main(loc, Role::store)) {
  // Succeeds only when no other connection has the database open; otherwise the load
  // simply stays in WAL mode.
  db_->set_busy_timeout(0);
  try {
    Stmt s(db_->handle(), "PRAGMA journal_mode = TRUNCATE", false);
    journal_switched_ = s.step() && s.blob(0) == "truncate";
  } catch (const StorageError&) {
    journal_switched_ = false;
  }
  db_->set_busy_timeout(loc.lock_timeout);
}

BulkLoader::~BulkLoader() {
  if (journal_switched_) {
    try {
      db_->exec("PRAGMA journal_mode = WAL");
    } catch (...) {
      // The next writable open sets WAL again (schema_installer); the data is safe anyway.
    }
  }
}

template <class F>
void BulkLoader::in_transaction(std::optional<Tid> expected_last, F&& body) {
  db_->prepared("BEGIN IMMEDIATE").run();
  try {
    if (expected_last) {
      const Tid now =
          newest_finished_tid(*db_, loc_.keep_history,
                              !loc_.keep_history && db_->has_table(backend::kDeletionMarkTable));
      backend::expect_bulk_last_tid(now, *expected_last);
    }
    body();
    // The allocator lives in oids.sqlite3, outside this transaction: it moves first, so
    // that no batch lands without it (a batch that then fails leaves it ahead: harmless).
    if (!highest_.is_zero()) OidAllocator(loc_).set_min(highest_);
    db_->prepared("COMMIT").run();
  } catch (...) {
    db_->rollback_quietly();
    throw;
  }
}

void BulkLoader::apply_current(std::span<const backend::BulkRecord> records,
                               std::optional<Tid> expected_last) {
  if (loc_.keep_history)
    throw StorageError("a current-records bulk load needs a history-free database");
  Stmt& upsert = db_->prepared(kUpsertCurrent);
  Stmt& drop_blobs = db_->prepared(kDropBlobs);
  Stmt& remove = db_->prepared(kDeleteCurrent);
  const bool mark_deletions = db_->has_table(backend::kDeletionMarkTable);
  in_transaction(expected_last, [&] {
    Tid deleted;  // the newest TID of a removed row, for polls (backend/deletion_mark.h)
    for (const auto& r : records) {
      highest_ = std::max(highest_, r.oid);
      // Blob rows belong to the state being replaced; deleted objects lose them by cascade.
      drop_blobs.bind(1, r.oid.sql()).run();
      if (r.state) {
        upsert.bind(1, r.oid.sql())
            .bind(2, r.tid.sql())
            .bind(3, static_cast<int64_t>(r.state->size()))
            .bind_state(4, *r.state, r.oid.value())
            .run();
      } else {
        remove.bind(1, r.oid.sql()).run();
        if (db_->changes() > 0) deleted = std::max(deleted, r.tid);
      }
    }
    if (mark_deletions && !deleted.is_zero()) {
      db_->prepared(kMarkDeletion).bind(1, deleted.sql()).run();
    }
  });
}

void BulkLoader::restore(std::span<const TransactionRecord> transactions,
                         std::optional<Tid> expected_last) {
  if (!loc_.keep_history)
    throw StorageError("a transaction bulk load needs a history-preserving database");
  Stmt& taken = db_->prepared(kTidTaken);
  Stmt& txn_row = db_->prepared(kInsertTransaction);
  Stmt& revision = db_->prepared(kInsertRevision);
  Stmt& current = db_->prepared(kMakeCurrent);
  in_transaction(expected_last, [&] {
    for (const TransactionRecord& t : transactions) {
      {
        StmtScope scope(taken);
        taken.bind(1, t.tid.sql());
        if (taken.step()) {
          throw StorageError("cannot restore transaction " + t.tid.hex() +
                             ": the database already has a transaction with that TID");
        }
      }
      txn_row.bind(1, t.tid.sql())
          .bind(2, t.status == 'p' ? 1 : 0)
          .bind(3, t.records.empty() ? 1 : 0)
          .bind_blob(4, t.user)
          .bind_blob(5, t.description)
          .bind_blob(6, t.extension)
          .run();
      for (const DataRecord& r : t.records) {
        highest_ = std::max(highest_, r.oid);
        revision.bind(1, r.oid.sql()).bind(2, t.tid.sql());
        std::string md5;
        if (r.data) {
          md5 = md5_hex(*r.data);
          revision.bind_text(3, md5)
              .bind(4, static_cast<int64_t>(r.data->size()))
              .bind_state(5, *r.data, r.oid.value());
        } else {
          revision.bind_null(3).bind(4, 0).bind_null(5);
        }
        revision.run();
        current.bind(1, r.oid.sql()).bind(2, t.tid.sql()).run();
      }
    }
  });
}

}  // namespace relstore::sqlite
