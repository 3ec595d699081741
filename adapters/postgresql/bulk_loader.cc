#include "adapters/postgresql/bulk_loader.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "adapters/postgresql/oid_allocator.h"
#include "adapters/postgresql/queries.h"
#include "md5.h"
#include "relstore/errors.h"

namespace relstore::postgresql {
namespace {

// The temporary tables are emptied with TRUNCATE: deleted rows of a temporary table are
// never vacuumed, and a batch is large enough for the truncation's file work not to count.
constexpr const char* kCreateHf =
    "CREATE TEMPORARY TABLE IF NOT EXISTS relstore_bulk_hf "
    "(zoid BIGINT NOT NULL, tid BIGINT NOT NULL, state BYTEA)";
// One table for both kinds of rows, so one COPY (one extra round trip) carries a batch:
// transaction rows have no zoid; record rows carry prev_tid when the batch holds an
// earlier revision of the object (else it comes from current_object) and is_current on
// the object's last revision in the batch.
constexpr const char* kCreateHp =
    "CREATE TEMPORARY TABLE IF NOT EXISTS relstore_bulk_hp "
    "(tid BIGINT NOT NULL, zoid BIGINT, packed BOOLEAN, is_empty BOOLEAN, username BYTEA, "
    "description BYTEA, extension BYTEA, prev_tid BIGINT, md5 CHAR(32), state BYTEA, "
    "is_current BOOLEAN)";

// Reached through object_state's primary key per zoid ("= ANY(ARRAY(...))"), never by a
// join the planner could turn into a scan of the big table: the temporary table has no
// statistics.
constexpr const char* kMoveHf =
    "DELETE FROM blob_chunk WHERE zoid = ANY (ARRAY(SELECT zoid FROM relstore_bulk_hf)); "
    "DELETE FROM object_state "
    "WHERE zoid = ANY (ARRAY(SELECT zoid FROM relstore_bulk_hf WHERE state IS NULL)); "
    "INSERT INTO object_state (zoid, tid, state_size, state) "
    "SELECT zoid, tid, length(state), state FROM relstore_bulk_hf WHERE state IS NOT NULL "
    "ON CONFLICT (zoid) DO UPDATE "
    "SET tid = excluded.tid, state_size = excluded.state_size, state = excluded.state";

constexpr const char* kMoveHp =
    "DO $$ DECLARE v_tid BIGINT; BEGIN "
    "SELECT b.tid INTO v_tid FROM relstore_bulk_hp b WHERE b.zoid IS NULL "
    "AND EXISTS (SELECT 1 FROM \"transaction\" t WHERE t.tid = b.tid) LIMIT 1; "
    "IF FOUND THEN RAISE EXCEPTION 'cannot restore transaction %: the database already has "
    "a transaction with that TID', lpad(to_hex(v_tid), 16, '0'); END IF; END $$; "
    "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, extension) "
    "SELECT tid, packed, is_empty, username, description, extension FROM relstore_bulk_hp "
    "WHERE zoid IS NULL; "
    "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) "
    "SELECT b.zoid, b.tid, COALESCE(b.prev_tid, "
    "(SELECT c.tid FROM current_object c WHERE c.zoid = b.zoid), 0), "
    "b.md5, COALESCE(length(b.state), 0), b.state FROM relstore_bulk_hp b "
    "WHERE b.zoid IS NOT NULL; "
    "INSERT INTO current_object (zoid, tid) SELECT zoid, tid FROM relstore_bulk_hp "
    "WHERE is_current ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid";

// Run before the move: only absent records whose object has a row remove one.
constexpr const char* kMarkBulkDeletions =
    "WITH gone AS (SELECT b.tid FROM relstore_bulk_hf b WHERE b.state IS NULL "
    "AND EXISTS (SELECT 1 FROM object_state o WHERE o.zoid = b.zoid)) "
    "UPDATE relstore_hf_deletion SET tid = (SELECT MAX(tid) FROM gone) "
    "WHERE id = 0 AND EXISTS (SELECT 1 FROM gone)";

// Runs `body` (statements that may include COPY … FROM STDIN, served in order by `rows`)
// in one transaction with the OID allocator moved past `highest`: one message. With
// `expected_last`, a round trip before it takes the commit lock and reads the newest
// finished TID, which must be that one (Adapter::bulk_apply_current); the object table's
// lock comes first, as in zap_all (queries.h).
void run_batch(Conn& conn, bool keep_history, const std::string& body, Oid highest,
               const CopyProducer& rows, std::optional<Tid> expected_last) {
  std::string sql;
  try {
    if (expected_last) {
      const auto r = conn.simple(std::string("BEGIN; ") + object_table_lock_sql(keep_history) +
                                     "; " + kCommitLockSql + "; SELECT relstore_last_tid()",
                                 Context::other);
      const Tid now = Tid::from_sql(r.back().int64(0, 0));
      backend::expect_bulk_last_tid(now, *expected_last);
    } else {
      sql = "BEGIN; ";
    }
    sql += body;
    if (!highest.is_zero()) sql += set_min_oid_sql(highest) + "; ";
    sql += "COMMIT";
    conn.simple(sql, Context::other, &rows);
  } catch (...) {
    conn.rollback_quietly();
    throw;
  }
}

}  // namespace

bool take_bulk_lock(Conn& conn, double timeout, bool keep, const std::atomic<bool>* stop) {
  // Polled rather than waited for with lock_timeout, so that running out of time gets its
  // own message instead of the one for any lock.
  const auto start = std::chrono::steady_clock::now();
  const char* sql = keep ? "SELECT pg_try_advisory_lock(1919249523, 4)::int"
                         : "SELECT CASE WHEN pg_try_advisory_lock(1919249523, 4) "
                           "THEN pg_advisory_unlock(1919249523, 4)::int ELSE 0 END";
  for (;;) {
    if (conn.simple(sql, Context::other).back().int64(0, 0) == 1) return true;
    if (stop && stop->load()) return false;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= timeout) throw backend::bulk_load_busy(waited);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

BulkLoader::BulkLoader(const Location& loc, backend::Adapter& counter)
    : loc_(loc), conn_(open_conn(loc, Role::store, &counter)) {
  take_bulk_lock(*conn_, loc.lock_timeout, true);
  // A batch (20,000 records of ~750 bytes by default) fits in the session's buffers for
  // temporary tables instead of going through files; settable before the first use only.
  const auto r = conn_->simple(std::string("SET temp_buffers = '256MB'; ") +
                                   (loc.keep_history ? kCreateHp : kCreateHf) +
                                   "; SELECT NOT EXISTS (SELECT 1 FROM object_state)",
                               Context::other);
  if (r.back().int64(0, 0)) written_.emplace();
}

bool BulkLoader::maybe_written(Oid oid) const {
  return !written_ || oid.value() >= written_->size() || (*written_)[oid.value()];
}

void BulkLoader::apply_current(std::span<const backend::BulkRecord> records,
                               std::optional<Tid> expected_last) {
  if (loc_.keep_history) {
    throw StorageError("a current-records bulk load needs a history-free database");
  }
  if (records.empty()) return;
  // Objects this load has not written yet have no row when it began on an empty
  // database: their records are copied straight into object_state (half the work of
  // going through the temporary table); the others are upserted or deleted from it.
  Oid highest;
  std::vector<const backend::BulkRecord*> fresh, others;
  for (const auto& r : records) {
    highest = std::max(highest, r.oid);
    (r.state && !maybe_written(r.oid) ? fresh : others).push_back(&r);
  }
  std::string body;
  if (!fresh.empty()) {
    body += "COPY object_state (zoid, tid, state_size, state) FROM STDIN (FORMAT binary); ";
  }
  if (!others.empty()) {
    body += std::string("TRUNCATE relstore_bulk_hf; ") +
            "COPY relstore_bulk_hf (zoid, tid, state) FROM STDIN (FORMAT binary); ";
    // Polls cannot list removed rows (backend/deletion_mark.h).
    if (loc_.deletion_mark) body += std::string(kMarkBulkDeletions) + "; ";
    body += std::string(kMoveHf) + "; ";
  }
  int copies = 0;
  const CopyProducer rows = [&](CopyWriter& w) {
    if (copies++ == 0 && !fresh.empty()) {
      for (const auto* r : fresh) {
        w.begin_row(4);
        w.int64(r->oid.sql());
        w.int64(r->tid.sql());
        w.int64(static_cast<int64_t>(r->state->size()));
        w.bytes(*r->state);
      }
      return;
    }
    for (const auto* r : others) {
      w.begin_row(3);
      w.int64(r->oid.sql());
      w.int64(r->tid.sql());
      if (r->state) {
        w.bytes(*r->state);
      } else {
        w.null();
      }
    }
  };
  run_batch(*conn_, loc_.keep_history, body, highest, rows, expected_last);
  for (const auto& r : records) note_written(r.oid);
}

void BulkLoader::note_written(Oid oid) {
  if (!written_ || oid.value() >= kTrackedOids) return;
  if (oid.value() >= written_->size()) {
    written_->resize(std::max<uint64_t>(oid.value() + 1, written_->size() * 2));
  }
  (*written_)[oid.value()] = true;
}

void BulkLoader::restore(std::span<const TransactionRecord> transactions,
                         std::optional<Tid> expected_last) {
  if (!loc_.keep_history) {
    throw StorageError("a transaction bulk load needs a history-preserving database");
  }
  if (transactions.empty()) return;
  // Where each oid's revisions are in the batch: the previous one gives prev_tid, the
  // last one goes into current_object.
  std::unordered_map<Oid, std::pair<size_t, size_t>> last;  // oid -> (txn, record) index
  Oid highest;
  for (size_t t = 0; t < transactions.size(); ++t) {
    const auto& records = transactions[t].records;
    for (size_t i = 0; i < records.size(); ++i) {
      last[records[i].oid] = {t, i};
      highest = std::max(highest, records[i].oid);
    }
  }
  std::unordered_map<Oid, Tid> seen;  // oid -> TID of its latest revision so far
  seen.reserve(last.size());
  const CopyProducer rows = [&](CopyWriter& w) {
    for (size_t t = 0; t < transactions.size(); ++t) {
      const TransactionRecord& txn = transactions[t];
      w.begin_row(11);
      w.int64(txn.tid.sql());
      w.null();
      w.boolean(txn.status == 'p');
      w.boolean(txn.records.empty());
      w.bytes(txn.user);
      w.bytes(txn.description);
      w.bytes(txn.extension);
      for (int i = 0; i < 4; ++i) w.null();
      for (size_t i = 0; i < txn.records.size(); ++i) {
        const DataRecord& r = txn.records[i];
        w.begin_row(11);
        w.int64(txn.tid.sql());
        w.int64(r.oid.sql());
        for (int k = 0; k < 5; ++k) w.null();
        auto [it, first] = seen.try_emplace(r.oid, txn.tid);
        if (first && !maybe_written(r.oid)) {
          w.int64(0);  // a new object: no need to look in current_object
        } else if (first) {
          w.null();
        } else {
          w.int64(it->second.sql());
          it->second = txn.tid;
        }
        if (r.data) {
          w.bytes(md5_hex(*r.data));
          w.bytes(*r.data);
        } else {
          w.null();
          w.null();
        }
        const auto& [lt, li] = last.at(r.oid);
        w.boolean(lt == t && li == i);
      }
    }
  };
  run_batch(*conn_, loc_.keep_history,
            std::string("TRUNCATE relstore_bulk_hp; COPY relstore_bulk_hp (tid, zoid, packed, "
                        "is_empty, username, description, extension, prev_tid, md5, state, "
                        "is_current) FROM STDIN (FORMAT binary); ") +
                kMoveHp + "; ",
            highest, rows, expected_last);
  for (const auto& [oid, unused] : last) note_written(oid);
}

}  // namespace relstore::postgresql
