#include "adapters/mysql/store_connection.h"

#include <algorithm>
#include <cmath>

#include "adapters/mysql/bulk_loader.h"
#include "adapters/mysql/json_mirror.h"
#include "adapters/mysql/named_lock.h"
#include "adapters/mysql/upload.h"
#include "backend/blob_chunks.h"
#include "backend/forced_tid.h"
#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

constexpr std::string_view kInsertTemp =
    "INSERT INTO temp_store (zoid, prev_tid, md5, state) VALUES ";

// A vote's blobs go into temp_blob_chunk in RelStorage's chunks of 1 MiB, one statement
// each, and the finish moves them (temp_tables.sql, relstore_finish.sql).
constexpr std::string_view kInsertBlobChunk =
    "INSERT INTO temp_blob_chunk (zoid, chunk_num, chunk) VALUES ";
constexpr size_t kBlobChunk = 1 << 20;

int lock_wait_seconds(double timeout) { return std::max(1, static_cast<int>(std::ceil(timeout))); }

size_t row_size(const backend::PendingRecord& r) {
  return 80 + r.md5.value_or("").size() + (r.state ? binary_literal_size(*r.state) : 4);
}

void append_row(std::string& sql, const backend::PendingRecord& r) {
  sql += '(';
  sql += std::to_string(r.oid.sql());
  sql += ',';
  sql += std::to_string(r.prev_tid.sql());
  sql += ',';
  if (!r.md5) {
    sql += "NULL";
  } else {
    sql += '\'';
    sql += *r.md5;  // lowercase hex: nothing to escape
    sql += '\'';
  }
  sql += ',';
  if (r.state) {
    append_binary_literal(sql, *r.state);
  } else {
    sql += "NULL";
  }
  sql += ')';
}

// A commit's records as upload rows for temp_store.
UploadRows temp_store_rows(std::span<const backend::PendingRecord> records) {
  UploadRows rows;
  rows.count = records.size();
  rows.size = [records](size_t i) { return row_size(records[i]); };
  rows.append = [records](std::string& sql, size_t i) { append_row(sql, records[i]); };
  rows.name = [records](size_t i) { return "the record of oid " + records[i].oid.hex(); };
  return rows;
}

}  // namespace

MysqlStoreConnection::MysqlStoreConnection(const Settings& settings, backend::Adapter& adapter)
    : settings_(settings),
      adapter_(adapter),
      conn_(open_connection(settings, Role::store, &adapter)),
      oids_(std::make_unique<OidAllocator>(*conn_)),
      lock_wait_seconds_(lock_wait_seconds(settings.lock_timeout)) {}

MysqlStoreConnection::~MysqlStoreConnection() { rollback(); }

template <class F>
auto MysqlStoreConnection::once_more_if_lost(F&& step) {
  try {
    return step();
  } catch (const DisconnectedError&) {
    // With a client read or write timeout the loss may be our own timeout while the
    // server's session still runs (and waits for, or holds, row locks): then the error
    // stands, as a retry would leave that session behind.
    const auto& options = settings_.connect.options;
    if (conn_->healthy() || options.count("read_timeout") || options.count("write_timeout")) {
      throw;
    }
    conn_ = open_connection(settings_, Role::store, &adapter_);
    holds_root_lock_ = false;  // ended with the lost session
    oids_ = std::make_unique<OidAllocator>(*conn_);
    lock_wait_seconds_ = lock_wait_seconds(settings_.lock_timeout);
    return step();
  }
}

std::vector<Oid> MysqlStoreConnection::allocate_oids() {
  // A block taken on the lost connection but not reported is skipped, which is harmless.
  auto oids = once_more_if_lost([&] { return oids_->allocate(); });
  if (oids_->take_lock_wait_touched()) lock_wait_seconds_ = 0;  // the next vote sets it again
  return oids;
}

void MysqlStoreConnection::set_min_oid(Oid oid) {
  once_more_if_lost([&] { oids_->set_min(oid); });
}

std::vector<backend::ConflictRow> MysqlStoreConnection::vote(const backend::VoteRequest& req) {
  return once_more_if_lost([&] { return try_vote(req); });
}

std::vector<backend::ConflictRow> MysqlStoreConnection::try_vote(const backend::VoteRequest& req) {
  has_deletes_ = std::any_of(req.records.begin(), req.records.end(),
                             [](const backend::PendingRecord& r) { return !r.state; });
  if (req.check_conflicts &&
      std::any_of(req.records.begin(), req.records.end(), [](const backend::PendingRecord& r) {
        return r.oid.is_zero() && r.prev_tid.is_zero();
      })) {
    lock_root_creation(req.lock_timeout);
  }
  std::string tail;
  int tail_statements = 0;
  const int wait = lock_wait_seconds(req.lock_timeout);
  if (wait != lock_wait_seconds_) {
    tail += "SET SESSION innodb_lock_wait_timeout = " + std::to_string(wait) + "; ";
    ++tail_statements;
    lock_wait_seconds_ = wait;
  }
  if (!req.read_current.empty()) {
    tail += "INSERT INTO temp_read_current (zoid, tid) VALUES ";
    for (size_t i = 0; i < req.read_current.size(); ++i) {
      if (i) tail += ',';
      tail += '(' + std::to_string(req.read_current[i].oid.sql()) + ',' +
              std::to_string(req.read_current[i].serial.sql()) + ')';
    }
    tail += "; ";
    ++tail_statements;
  }
  tail += "CALL relstore_lock_and_detect(";
  tail += req.check_conflicts ? "TRUE, " : "FALSE, ";
  tail += req.read_current.empty() ? "FALSE, " : "TRUE, ";
  tail += req.forced_tid ? std::to_string(req.forced_tid->sql()) : "NULL";
  tail += ')';
  ++tail_statements;

  struct Row {
    char kind;
    Oid oid;
    Tid tid, given;
    std::optional<Bytes> state;
    std::optional<Bytes> mode;  // 'C' rows: the JSON mirror's mode
  };
  std::vector<Row> rows;
  mirror_in_commit_.reset();
  upload(
      *conn_, settings_, kInsertTemp, temp_store_rows(req.records), tail, tail_statements,
      [&](Rows& r) {
        while (r.next()) {
          const std::string kind = r.bytes(0);
          const char k = kind.empty() ? '?' : kind[0];
          rows.push_back({k, r.is_null(1) ? Oid() : Oid::from_sql(r.int64(1)),
                          r.is_null(2) ? Tid() : Tid::from_sql(r.int64(2)),
                          r.is_null(3) ? Tid() : Tid::from_sql(r.int64(3)), r.optional_bytes(4),
                          k == 'C' ? r.optional_bytes(5) : std::nullopt});
        }
      },
      Context::vote);

  std::vector<backend::ConflictRow> out;
  for (auto& row : rows) {
    switch (row.kind) {
      case 'T':
        throw backend::tid_not_after(row.given, row.tid, settings_.connect.describe);
      case 'L':
        throw ReadConflictError(std::nullopt, std::nullopt,
                                "an object read with readCurrent is being committed by "
                                "another transaction");
      case 'R':
        throw ReadConflictError(row.oid, std::make_pair(row.tid, row.given));
      case 'C':
        if (!mirror_in_commit_) {
          mirror_in_commit_ = row.mode && parse_mirror_mode(*row.mode) == MirrorMode::in_commit;
        }
        // One row per object written; a conflict is a committed TID other than the serial
        // the writer read.
        if (req.check_conflicts && row.tid != row.given) {
          out.push_back({row.oid, row.tid, row.given, std::move(row.state)});
        }
        break;
      default:
        throw StorageError("relstore_lock_and_detect returned an unknown row kind");
    }
  }
  read_missing_committed_states(out);
  upload_blobs(req.blobs);
  return out;
}

void MysqlStoreConnection::upload_blobs(std::span<const backend::PendingBlob> blobs) {
  for (const auto& b : blobs) {
    backend::read_blob_chunks(b.path, kBlobChunk, [&](int64_t num, Bytes&& chunk) {
      UploadRows row;
      row.count = 1;
      row.size = [&](size_t) { return 64 + binary_literal_size(chunk); };
      row.append = [&](std::string& sql, size_t) {
        sql += '(' + std::to_string(b.oid.sql()) + ',' + std::to_string(num) + ',';
        append_binary_literal(sql, chunk);
        sql += ')';
      };
      row.name = [&](size_t) {
        return "chunk " + std::to_string(num) + " of the blob of oid " + b.oid.hex();
      };
      // The variable tells relstore_finish that there are chunks to move.
      upload(*conn_, settings_, kInsertBlobChunk, row, "SET @relstore_blobs = TRUE", 1, nullptr,
             Context::vote);
    });
  }
}

// History-preserving votes read a conflict's committed state with a non-locking subquery,
// whose view may date from before the vote waited for a later row's lock: that row then
// comes back with the new TID and no state, and a conflict the resolver could merge would
// fail. Its TID is final (the row is locked), so a new statement reads the state. Rare:
// only for a second conflict whose committer finished while the vote waited.
void MysqlStoreConnection::read_missing_committed_states(std::vector<backend::ConflictRow>& out) {
  std::string sql;
  for (const auto& c : out) {
    if (c.committed_state || c.committed.is_zero()) continue;
    sql += sql.empty() ? "SELECT zoid, tid, state FROM object_state WHERE (zoid, tid) IN (" : ", ";
    sql += "(" + std::to_string(c.oid.sql()) + ", " + std::to_string(c.committed.sql()) + ")";
  }
  if (sql.empty()) return;
  sql += ")";
  conn_->batch(
      sql, 1,
      [&](Rows& r) {
        while (r.next()) {
          const Oid oid = Oid::from_sql(r.int64(0));
          const Tid tid = Tid::from_sql(r.int64(1));
          for (auto& c : out) {
            if (c.oid == oid && c.committed == tid) c.committed_state = r.optional_bytes(2);
          }
        }
      },
      Context::vote);
}

void MysqlStoreConnection::replace(std::span<const backend::PendingRecord> records) {
  if (records.empty()) return;
  std::string sql = "DELETE FROM temp_store WHERE zoid IN (";
  for (size_t i = 0; i < records.size(); ++i) {
    if (i) sql += ',';
    sql += std::to_string(records[i].oid.sql());
  }
  sql += ')';
  conn_->exec(sql, Context::vote, "replacing resolved objects");
  upload(*conn_, settings_, kInsertTemp, temp_store_rows(records), "", 0, nullptr, Context::vote);
}

Tid MysqlStoreConnection::finish(const backend::FinishRequest& req) {
  std::string sql = "CALL relstore_finish(";
  sql += req.forced_tid ? std::to_string(req.forced_tid->sql()) : "NULL";
  if (!settings_.keep_history) sql += has_deletes_ ? ", TRUE" : ", FALSE";
  if (settings_.keep_history) {
    sql += req.status == 'p' ? ", TRUE, " : ", FALSE, ";
    append_binary_literal(sql, req.meta->user);
    sql += ", ";
    append_binary_literal(sql, req.meta->description);
    sql += ", ";
    append_binary_literal(sql, req.meta->extension);
  }
  // In-commit JSON mirror: the rows go into temp_json in the same round trip, and the
  // procedure writes them with the commit's TID. An empty commit's vote returned no rows to
  // carry the mode: NULL lets the history-preserving procedure read it (a history-free
  // database keeps no trace of an empty commit to follow).
  sql += req.mirror                                                            ? ", TRUE)"
         : req.records.empty() && !mirror_in_commit_ && settings_.keep_history ? ", NULL)"
                                                                               : ", FALSE)";
  std::optional<Tid> tid;
  const RowsCallback on_rows = [&](Rows& r) {
    if (r.next()) tid = Tid::from_sql(r.int64(0));
  };
  if (req.mirror) {
    std::optional<mirror::Batch> fitted;
    const mirror::Batch& rows = json_mirror::fit_to_packet(*req.mirror, settings_, fitted);
    upload(*conn_, settings_, json_mirror::kInsertTemp, json_mirror::temp_rows(rows), sql, 1,
           on_rows, Context::commit);
  } else {
    conn_->batch(sql, 1, on_rows, Context::commit, "finishing the commit");
  }
  if (!tid) throw StorageError("relstore_finish returned no TID");
  release_root_lock();  // committed: a second creator now finds the root
  return *tid;
}

void MysqlStoreConnection::lock_root_creation(double timeout) {
  if (holds_root_lock_) return;  // a vote again after conflict resolution
  const int seconds = lock_wait_seconds(timeout);
  if (!get_named_lock(*conn_, "relstore_root", seconds, Context::vote)) {
    throw LockConflictError("another transaction is creating the root object (OID 0); waited " +
                            std::to_string(seconds) + " s (commit_lock_timeout)");
  }
  holds_root_lock_ = true;
}

void MysqlStoreConnection::release_root_lock() noexcept {
  if (!holds_root_lock_) return;
  holds_root_lock_ = false;
  try {
    if (conn_ && conn_->healthy()) {
      release_named_lock(*conn_, "relstore_root");
    }
  } catch (...) {
    // A session that failed here is dropped, and its locks end with it.
  }
}

void MysqlStoreConnection::hold_bulk_lock() {
  take_bulk_lock(*conn_, settings_.lock_timeout, true);
}

void MysqlStoreConnection::apply_current(std::span<const backend::BulkRecord> records,
                                         std::optional<Tid> expected_last) {
  if (records.empty()) return;
  // Straight into object_state, in oid order, rather than through temp_store as commits
  // go: that wrote every state twice and, with the blob and delete joins, made a load of
  // 1M records ten times slower. REPLACE inserts a new object's row and replaces an
  // existing one (resumed and incremental loads); a replaced row's blob chunks go with it
  // by the foreign key's cascade. Later records of an oid replace earlier ones.
  std::vector<const backend::BulkRecord*> present;
  std::vector<int64_t> gone;
  Oid highest;
  Tid gone_tid;  // the newest TID of an absent record
  for (const auto& r : records) {
    highest = std::max(highest, r.oid);
    if (r.state) {
      present.push_back(&r);
    } else {
      gone.push_back(r.oid.sql());
      gone_tid = std::max(gone_tid, r.tid);
    }
  }
  std::stable_sort(present.begin(), present.end(),
                   [](const auto* a, const auto* b) { return a->oid < b->oid; });
  UploadRows rows;
  rows.count = present.size();
  rows.size = [&](size_t i) { return 60 + binary_literal_size(*present[i]->state); };
  rows.append = [&](std::string& sql, size_t i) {
    const backend::BulkRecord& r = *present[i];
    sql += '(' + std::to_string(r.oid.sql()) + ',' + std::to_string(r.tid.sql()) + ',' +
           std::to_string(r.state->size()) + ',';
    append_binary_literal(sql, *r.state);
    sql += ')';
  };
  rows.name = [&](size_t i) { return "the record of oid " + present[i]->oid.hex(); };
  try {
    if (expected_last) {
      std::vector<int64_t> zoids = gone;
      for (const auto* r : present) zoids.push_back(r->oid.sql());
      expect_last_tid(*conn_, settings_, std::move(zoids), *expected_last);
    }
    // Deletions are rare in a load: statements of their own, a few thousand oids each.
    constexpr size_t kPerStatement = 2000;
    for (size_t i = 0; i < gone.size(); i += kPerStatement) {
      std::string oids;
      for (size_t j = i; j < std::min(gone.size(), i + kPerStatement); ++j) {
        if (j != i) oids += ',';
        oids += std::to_string(gone[j]);
      }
      if (settings_.has_deletion_mark) {
        // Polls cannot list removed rows (backend/deletion_mark.h): recorded when rows of
        // these objects exist, before they go.
        conn_->exec("UPDATE relstore_hf_deletion SET tid = " + std::to_string(gone_tid.sql()) +
                        " WHERE id = 0 AND EXISTS (SELECT 1 FROM object_state WHERE zoid IN (" +
                        oids + "))",
                    Context::other, "recording the deletions");
      }
      conn_->exec("DELETE FROM object_state WHERE zoid IN (" + oids + ")", Context::other,
                  "deleting objects absent from the source");
    }
    // The allocator moves in the same transaction: a batch never lands without it.
    upload(*conn_, settings_,
           std::string_view("REPLACE INTO object_state (zoid, tid, state_size, state) VALUES "),
           rows, OidAllocator::set_min_statement(highest) + "; COMMIT", 2, nullptr, Context::other);
  } catch (...) {
    rollback();
    throw;
  }
}

void MysqlStoreConnection::rollback() noexcept {
  if (conn_ && conn_->healthy()) conn_->rollback();
  release_root_lock();
}

}  // namespace relstore::mysql
