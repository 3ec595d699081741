#include "adapters/mysql/bulk_loader.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "adapters/mysql/named_lock.h"
#include "adapters/mysql/queries.h"
#include "adapters/mysql/upload.h"
#include "backend/deletion_mark.h"
#include "md5.h"
#include "relstore/errors.h"

namespace relstore::mysql {
namespace {

// One object_state row of the batch.
struct Revision {
  Oid oid;
  Tid tid;
  Tid prev_tid;
  const DataRecord* record;
  std::string md5;
};

std::string number(int64_t v) { return std::to_string(v); }

// Sends `ids` as "prefix id,id,… suffix" statements of at most `per_statement` ids, one
// round trip each, handing the result sets to `on_rows`.
void query_in(Connection& conn, const std::string& prefix, const std::vector<int64_t>& ids,
              const char* suffix, const RowsCallback& on_rows) {
  constexpr size_t kPerStatement = 50'000;
  for (size_t i = 0; i < ids.size(); i += kPerStatement) {
    std::string sql = prefix;
    for (size_t j = i; j < std::min(ids.size(), i + kPerStatement); ++j) {
      if (j != i) sql += ',';
      sql += number(ids[j]);
    }
    sql += suffix;
    conn.batch(sql, 1, on_rows, Context::other, "reading the destination before a bulk load");
  }
}

}  // namespace

bool take_bulk_lock(Connection& conn, double timeout, bool keep, const std::atomic<bool>* stop) {
  const int seconds = std::max(1, static_cast<int>(std::ceil(timeout)));
  // GET_LOCK waits on the server: with a stop to watch, a second at a time.
  int waited = 0;
  while (!get_named_lock(conn, "relstore_bulk", stop ? 1 : seconds)) {
    waited += stop ? 1 : seconds;
    if (waited >= seconds) throw backend::bulk_load_busy(waited);
    if (stop && stop->load()) return false;
  }
  if (!keep) release_named_lock(conn, "relstore_bulk");
  return true;
}

void expect_last_tid(Connection& conn, const Settings& settings, std::vector<int64_t> zoids,
                     Tid expected_last) {
  std::sort(zoids.begin(), zoids.end());
  query_in(conn,
           std::string("SELECT zoid FROM ") +
               (settings.keep_history ? "current_object" : "object_state") + " WHERE zoid IN (",
           zoids, ") ORDER BY zoid FOR UPDATE", nullptr);
  conn.exec("SELECT tid FROM commit_row_lock WHERE tid = 0 FOR UPDATE", Context::commit,
            "taking the commit lock for a bulk batch");
  Tid now = Tid::from_sql(conn.query_int(queries(settings.keep_history).last_tid));
  if (settings.has_deletion_mark) {
    now = backend::last_finished(now, Tid::from_sql(conn.query_int(kDeletionMark)));
  }
  backend::expect_bulk_last_tid(now, expected_last);
}

BulkLoader::BulkLoader(const Settings& settings, backend::Adapter& counter)
    : settings_(settings), conn_(open_connection(settings, Role::store, &counter)), oids_(*conn_) {
  take_bulk_lock(*conn_, settings.lock_timeout, true);
}

BulkLoader::~BulkLoader() {
  if (conn_->healthy()) conn_->rollback();
}

void BulkLoader::restore(std::span<const TransactionRecord> transactions,
                         std::optional<Tid> expected_last) {
  if (transactions.empty()) return;
  // prev_tid is the revision each one replaces: an earlier one of the batch, or the
  // object's current revision in the database, asked for once per object.
  std::unordered_map<Oid, Tid> last;
  std::vector<Revision> revisions;
  std::vector<int64_t> tids, first_seen;
  Oid highest;
  for (const TransactionRecord& t : transactions) {
    tids.push_back(t.tid.sql());
    for (const DataRecord& r : t.records) {
      auto [it, fresh] = last.try_emplace(r.oid, Tid());
      if (fresh) first_seen.push_back(r.oid.sql());
      revisions.push_back({r.oid, t.tid, it->second, &r, r.data ? md5_hex(*r.data) : ""});
      it->second = t.tid;
      highest = std::max(highest, r.oid);
    }
  }
  try {
    if (expected_last) expect_last_tid(*conn_, settings_, first_seen, *expected_last);
    std::optional<Tid> taken;
    query_in(*conn_, "SELECT tid FROM \"transaction\" WHERE tid IN (", tids, ") LIMIT 1",
             [&](Rows& r) {
               if (r.next()) taken = Tid::from_sql(r.int64(0));
             });
    if (taken) {
      throw StorageError("cannot restore transaction " + taken->hex() +
                         ": the database already has a transaction with that TID");
    }
    std::unordered_map<Oid, Tid> in_database;
    query_in(*conn_, "SELECT zoid, tid FROM current_object WHERE zoid IN (", first_seen, ")",
             [&](Rows& r) {
               while (r.next()) in_database[Oid::from_sql(r.int64(0))] = Tid::from_sql(r.int64(1));
             });
    for (Revision& v : revisions) {
      if (!v.prev_tid.is_zero()) continue;
      if (auto it = in_database.find(v.oid); it != in_database.end()) v.prev_tid = it->second;
    }
    // Rows in primary key order, so InnoDB appends rather than splits pages.
    std::sort(revisions.begin(), revisions.end(), [](const Revision& a, const Revision& b) {
      return a.oid != b.oid ? a.oid < b.oid : a.tid < b.tid;
    });

    UploadRows txn_rows;
    txn_rows.count = transactions.size();
    txn_rows.size = [&](size_t i) {
      const TransactionRecord& t = transactions[i];
      return 60 + lean_literal_size(t.user) + lean_literal_size(t.description) +
             lean_literal_size(t.extension);
    };
    txn_rows.append = [&](std::string& sql, size_t i) {
      const TransactionRecord& t = transactions[i];
      sql += '(' + number(t.tid.sql()) + (t.status == 'p' ? ",TRUE," : ",FALSE,") +
             (t.records.empty() ? "TRUE," : "FALSE,");
      append_lean_literal(sql, t.user);
      sql += ',';
      append_lean_literal(sql, t.description);
      sql += ',';
      append_lean_literal(sql, t.extension);
      sql += ')';
    };
    txn_rows.name = [&](size_t i) { return "transaction " + transactions[i].tid.hex(); };
    upload(*conn_, settings_,
           "INSERT INTO \"transaction\" (tid, packed, is_empty, username, description, "
           "extension) VALUES ",
           txn_rows, "", 0, nullptr, Context::other);

    UploadRows state_rows;
    state_rows.count = revisions.size();
    state_rows.size = [&](size_t i) {
      const auto& data = revisions[i].record->data;
      return 110 + (data ? lean_literal_size(*data) : 4);
    };
    state_rows.append = [&](std::string& sql, size_t i) {
      const Revision& v = revisions[i];
      const auto& data = v.record->data;
      sql += '(' + number(v.oid.sql()) + ',' + number(v.tid.sql()) + ',' +
             number(v.prev_tid.sql()) + ',';
      if (data) {
        sql += '\'' + v.md5 + "'," + number(static_cast<int64_t>(data->size())) + ',';
        append_lean_literal(sql, *data);
      } else {
        sql += "NULL,0,NULL";
      }
      sql += ')';
    };
    state_rows.name = [&](size_t i) { return "the record of oid " + revisions[i].oid.hex(); };
    upload(*conn_, settings_,
           "INSERT INTO object_state (zoid, tid, prev_tid, md5, state_size, state) VALUES ",
           state_rows, "", 0, nullptr, Context::other);

    // current_object: the batch's last revision of each object, replacing the row of an
    // object the database had.
    std::vector<std::pair<Oid, Tid>> current(last.begin(), last.end());
    std::sort(current.begin(), current.end());
    std::vector<int64_t> replaced;
    for (const auto& [oid, unused] : in_database) replaced.push_back(oid.sql());
    if (!replaced.empty()) {
      query_in(*conn_, "DELETE FROM current_object WHERE zoid IN (", replaced, ")", nullptr);
    }
    UploadRows current_rows;
    current_rows.count = current.size();
    current_rows.size = [](size_t) { return size_t{44}; };
    current_rows.append = [&](std::string& sql, size_t i) {
      sql += '(' + number(current[i].first.sql()) + ',' + number(current[i].second.sql()) + ')';
    };
    current_rows.name = [&](size_t i) { return "oid " + current[i].first.hex(); };
    // The allocator moves in the same transaction: a batch never lands without it.
    upload(*conn_, settings_, "INSERT INTO current_object (zoid, tid) VALUES ", current_rows,
           OidAllocator::set_min_statement(highest) + "; COMMIT", 2, nullptr, Context::other);
  } catch (...) {
    conn_->rollback();
    throw;
  }
}

}  // namespace relstore::mysql
