#include "adapters/sqlite/json_mirror.h"

#include "relstore/errors.h"

namespace relstore::sqlite::json_mirror {
namespace {

constexpr const char* kMode = "SELECT mode FROM relstore_json_mirror WHERE id = 0";
constexpr const char* kUpsertRow =
    "INSERT INTO object_json (zoid, tid, class_name, ghost_pickle, state, refs) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, "
    "class_name = excluded.class_name, ghost_pickle = excluded.ghost_pickle, "
    "state = excluded.state, refs = excluded.refs";
constexpr const char* kDeleteRow = "DELETE FROM object_json WHERE zoid = ?";
constexpr const char* kUpsertError =
    "INSERT INTO object_json_error (zoid, tid, message) VALUES (?, ?, ?) "
    "ON CONFLICT (zoid) DO UPDATE SET tid = excluded.tid, message = excluded.message";
constexpr const char* kDeleteError = "DELETE FROM object_json_error WHERE zoid = ?";
// An in-commit commit moves last_tid to its TID only when no other state newer than
// last_tid exists: states committed before the mode was in-commit, which only a catch-up
// mirrors, must stay visible to it.
constexpr const char* kAdvanceInCommit =
    "UPDATE relstore_json_mirror SET last_tid = ?1 WHERE id = 0 AND last_tid < ?1 "
    "AND NOT EXISTS (SELECT 1 FROM object_state o "
    "WHERE o.tid > relstore_json_mirror.last_tid AND o.tid <> ?1)";
// A follow or rebuild batch (mirror::Advance), never past the newest TID the database
// holds now: a batch read before a zap would otherwise claim the TIDs of data that is
// gone, and hide data loaded after with older ones.
constexpr const char* kAdvanceBatchHf =
    "UPDATE relstore_json_mirror SET last_tid = MAX(last_tid, ?2) WHERE id = 0 AND last_tid = ?1 "
    "AND ?2 <= (SELECT COALESCE(MAX(tid), 0) FROM object_state)";
constexpr const char* kAdvanceBatchHp =
    "UPDATE relstore_json_mirror SET last_tid = MAX(last_tid, ?2) WHERE id = 0 AND last_tid = ?1 "
    "AND ?2 <= (SELECT COALESCE(MAX(tid), 0) FROM \"transaction\")";

// "Is (zoid, tid) still the object's current, existing state?" per mode.
const char* still_current(bool keep_history) {
  return keep_history
             ? "SELECT 1 FROM current_object c JOIN object_state s ON s.zoid = c.zoid AND "
               "s.tid = c.tid WHERE c.zoid = ? AND c.tid = ? AND s.state IS NOT NULL"
             : "SELECT 1 FROM object_state WHERE zoid = ? AND tid = ? AND state IS NOT NULL";
}
const char* exists_now(bool keep_history) {
  return keep_history ? "SELECT 1 FROM current_object c JOIN object_state s ON s.zoid = c.zoid AND "
                        "s.tid = c.tid WHERE c.zoid = ? AND s.state IS NOT NULL"
                      : "SELECT 1 FROM object_state WHERE zoid = ? AND state IS NOT NULL";
}

bool row_exists(Db& db, const char* sql, Oid oid, std::optional<Tid> tid = std::nullopt) {
  Stmt& s = db.prepared(sql);
  StmtScope scope(s);
  s.bind(1, oid.sql());
  if (tid) s.bind(2, tid->sql());
  return s.step();
}

void put_row(Db& db, const mirror::Row& r, Tid tid) {
  const std::string refs = mirror::refs_json(r.refs);
  Stmt& s = db.prepared(kUpsertRow);
  s.bind(1, r.oid.sql())
      .bind(2, tid.sql())
      .bind_text(3, r.class_name)
      .bind_blob(4, r.ghost_pickle)
      .bind_text(5, r.json)
      .bind_text(6, refs)
      .run();
  db.prepared(kDeleteError).bind(1, r.oid.sql()).run();
}

void put_error(Db& db, const mirror::Error& e, Tid tid) {
  db.prepared(kUpsertError).bind(1, e.oid.sql()).bind(2, tid.sql()).bind_text(3, e.message).run();
  db.prepared(kDeleteRow).bind(1, e.oid.sql()).run();
}

void remove(Db& db, Oid oid) {
  db.prepared(kDeleteRow).bind(1, oid.sql()).run();
  db.prepared(kDeleteError).bind(1, oid.sql()).run();
}

template <class F>
void write_txn(Db& db, F&& body) {
  db.prepared("BEGIN IMMEDIATE").run();
  try {
    body();
    db.prepared("COMMIT").run();
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
}

}  // namespace

MirrorMode read_mode(Db& db) {
  if (!db.has_table("relstore_json_mirror")) return MirrorMode::off;
  Stmt& s = db.prepared(kMode);
  StmtScope scope(s);
  if (!s.step()) return MirrorMode::off;
  return parse_mirror_mode(s.blob(0));
}

void write_in_commit(Db& db, const mirror::Batch& batch, Tid tid) {
  for (const auto& r : batch.rows) put_row(db, r, tid);
  for (const auto& e : batch.errors) put_error(db, e, tid);
  for (const auto& [oid, unused] : batch.deletes) remove(db, oid);
  db.prepared(kAdvanceInCommit).bind(1, tid.sql()).run();
}

backend::MirrorState state(Db& db, bool keep_history) {
  if (!db.has_table("relstore_json_mirror")) {
    throw SchemaError("the database has no JSON mirror tables: run `relstore migrate up`");
  }
  db.exec("BEGIN");
  backend::MirrorState st;
  try {
    st.mode = read_mode(db);
    st.last_tid = Tid::from_sql(db.query_int("SELECT last_tid FROM relstore_json_mirror"));
    st.database_tid =
        Tid::from_sql(db.query_int(keep_history ? "SELECT MAX(tid) FROM \"transaction\""
                                                : "SELECT MAX(tid) FROM object_state"));
    st.rows = static_cast<uint64_t>(db.query_int("SELECT COUNT(*) FROM object_json"));
    st.errors = static_cast<uint64_t>(db.query_int("SELECT COUNT(*) FROM object_json_error"));
    Stmt& pending = db.prepared(keep_history ? "SELECT COUNT(*) FROM current_object WHERE tid > ?"
                                             : "SELECT COUNT(*) FROM object_state WHERE tid > ?");
    StmtScope scope(pending);
    pending.bind(1, st.last_tid.sql());
    if (pending.step()) st.pending = static_cast<uint64_t>(pending.int64(0));
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
  db.exec("COMMIT");
  return st;
}

void set_mode(Db& db, MirrorMode mode) {
  if (!db.has_table("relstore_json_mirror")) {
    throw SchemaError("the database has no JSON mirror tables: run `relstore migrate up`");
  }
  // The write lock is SQLite's commit lock: no commit is half-way while the mode changes.
  write_txn(db, [&] {
    Stmt& s = db.prepared("UPDATE relstore_json_mirror SET mode = ? WHERE id = 0");
    s.bind_text(1, mirror_mode_name(mode)).run();
  });
}

backend::MirrorChanges changes(Db& db, bool keep_history, Tid since, size_t limit) {
  const char* sql = keep_history
                        ? "SELECT c.zoid, c.tid, s.state FROM current_object c JOIN object_state s "
                          "ON s.zoid = c.zoid AND s.tid = c.tid WHERE c.tid > ?1 AND c.tid <= ?2 "
                          "ORDER BY c.tid, c.zoid LIMIT ?3"
                        : "SELECT zoid, tid, state FROM object_state WHERE tid > ?1 AND tid <= ?2 "
                          "ORDER BY tid, zoid LIMIT ?3";
  backend::MirrorChanges out;
  db.exec("BEGIN");
  try {
    out.database_tid =
        Tid::from_sql(db.query_int(keep_history ? "SELECT MAX(tid) FROM \"transaction\""
                                                : "SELECT MAX(tid) FROM object_state"));
    auto fetch = [&](Tid from, Tid to, int64_t max_rows) {
      Stmt& s = db.prepared(sql);
      StmtScope scope(s);
      s.bind(1, from.sql()).bind(2, to.sql()).bind(3, max_rows);
      std::vector<std::pair<Oid, backend::StateRow>> rows;
      while (s.step()) {
        rows.emplace_back(Oid::from_sql(s.int64(0)),
                          backend::StateRow{Tid::from_sql(s.int64(1)), s.optional_blob(2)});
      }
      return rows;
    };
    out.states = fetch(since, out.database_tid, static_cast<int64_t>(limit));
    if (out.states.size() >= limit && !out.states.empty()) {
      // Keep whole transactions: drop the last TID's rows, or take all of them when that
      // TID is the only one in the batch.
      out.more = true;
      const Tid last = out.states.back().second.tid;
      while (!out.states.empty() && out.states.back().second.tid == last) out.states.pop_back();
      if (out.states.empty()) out.states = fetch(Tid(last.value() - 1), last, INT64_MAX);
    }
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
  db.exec("COMMIT");
  return out;
}

std::vector<Oid> orphans(Db& db, bool keep_history, size_t limit) {
  Stmt& s = db.prepared(
      keep_history
          ? "SELECT j.zoid FROM (SELECT zoid FROM object_json UNION "
            "SELECT zoid FROM object_json_error) j LEFT JOIN current_object c ON c.zoid = j.zoid "
            "LEFT JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
            "WHERE s.state IS NULL LIMIT ?"
          : "SELECT j.zoid FROM (SELECT zoid FROM object_json UNION "
            "SELECT zoid FROM object_json_error) j LEFT JOIN object_state o ON o.zoid = j.zoid "
            "WHERE o.state IS NULL LIMIT ?");
  StmtScope scope(s);
  s.bind(1, static_cast<int64_t>(limit));
  std::vector<Oid> out;
  while (s.step()) out.push_back(Oid::from_sql(s.int64(0)));
  return out;
}

void apply(Db& db, bool keep_history, const mirror::Batch& batch,
           std::optional<mirror::Advance> advance) {
  write_txn(db, [&] {
    for (const auto& r : batch.rows) {
      if (row_exists(db, still_current(keep_history), r.oid, r.tid)) put_row(db, r, r.tid);
    }
    for (const auto& e : batch.errors) {
      if (row_exists(db, still_current(keep_history), e.oid, e.tid)) put_error(db, e, e.tid);
    }
    for (const auto& [oid, tid] : batch.deletes) {
      if (!row_exists(db, exists_now(keep_history), oid)) remove(db, oid);
    }
    if (advance) {
      db.prepared(keep_history ? kAdvanceBatchHp : kAdvanceBatchHf)
          .bind(1, advance->from.sql())
          .bind(2, advance->to.sql())
          .run();
    }
  });
}

void clear(Db& db) {
  write_txn(db, [&] { forget(db); });
}

void settle(Db& db, bool keep_history) {
  write_txn(db, [&] { db.exec(mirror::settle_sql(keep_history)); });
}

void forget(Db& db) {
  if (!db.has_table("relstore_json_mirror")) return;
  db.exec(
      "DELETE FROM object_json; DELETE FROM object_json_error; "
      "UPDATE relstore_json_mirror SET last_tid = 0 WHERE id = 0");
}

}  // namespace relstore::sqlite::json_mirror
