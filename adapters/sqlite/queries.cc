#include "adapters/sqlite/queries.h"

#include "adapters/sqlite/driver.h"
#include "backend/deletion_mark.h"

namespace relstore::sqlite {
namespace {

constexpr Queries kHistoryFree = {
    .last_tid = "SELECT MAX(tid) FROM object_state",
    .poll = "SELECT zoid, tid FROM object_state WHERE tid > ?",
    .load_current = "SELECT tid, state FROM object_state WHERE zoid = ?",
    .load_before = "SELECT tid, state, NULL FROM object_state WHERE zoid = ? AND tid < ?",
    .history = "SELECT tid, state_size, X'', X'', X'' FROM object_state WHERE zoid = ? LIMIT ?",
    .current_records =
        "SELECT zoid, tid, state FROM object_state WHERE zoid >= ? AND state IS NOT NULL "
        "ORDER BY zoid LIMIT ?",
    .records_before =
        "SELECT zoid, tid, state FROM object_state WHERE zoid >= ? AND tid < ? AND state IS NOT "
        "NULL "
        "ORDER BY zoid LIMIT ?",
    .current_tid = "SELECT tid FROM object_state WHERE zoid = ?",
    .conflicts =
        "SELECT t.zoid, COALESCE(o.tid, 0), t.prev_tid, o.state FROM temp_store t "
        "LEFT JOIN object_state o ON o.zoid = t.zoid "
        "WHERE COALESCE(o.tid, 0) <> t.prev_tid ORDER BY t.zoid",
    .count_objects = "SELECT COUNT(*) FROM object_state WHERE state IS NOT NULL",
    .count_transactions = "SELECT COUNT(DISTINCT tid) FROM object_state",
    .iter_transactions =
        "SELECT DISTINCT tid, 0, X'', X'', X'' FROM object_state WHERE tid >= ? AND tid <= ? "
        "ORDER BY tid",
};

constexpr Queries kHistoryPreserving = {
    .last_tid = "SELECT MAX(tid) FROM \"transaction\"",
    .poll = "SELECT zoid, tid FROM current_object WHERE tid > ?",
    .load_current =
        "SELECT c.tid, s.state FROM current_object c "
        "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid WHERE c.zoid = ?",
    .load_before =
        "SELECT o.tid, o.state, (SELECT MIN(n.tid) FROM object_state n "
        "WHERE n.zoid = o.zoid AND n.tid > o.tid) "
        "FROM object_state o WHERE o.zoid = ? AND o.tid < ? ORDER BY o.tid DESC LIMIT 1",
    .history =
        "SELECT s.tid, s.state_size, t.username, t.description, t.extension "
        "FROM object_state s JOIN \"transaction\" t ON t.tid = s.tid "
        "WHERE s.zoid = ? ORDER BY s.tid DESC LIMIT ?",
    .current_records =
        "SELECT c.zoid, c.tid, s.state FROM current_object c "
        "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
        "WHERE c.zoid >= ? AND s.state IS NOT NULL ORDER BY c.zoid LIMIT ?",
    .records_before =
        "SELECT s.zoid, s.tid, s.state FROM object_state s WHERE s.zoid >= ? "
        "AND s.tid = (SELECT MAX(n.tid) FROM object_state n WHERE n.zoid = s.zoid AND n.tid < ?) "
        "AND s.state IS NOT NULL ORDER BY s.zoid LIMIT ?",
    .current_tid = "SELECT tid FROM current_object WHERE zoid = ?",
    .conflicts =
        "SELECT t.zoid, COALESCE(c.tid, 0), t.prev_tid, s.state FROM temp_store t "
        "LEFT JOIN current_object c ON c.zoid = t.zoid "
        "LEFT JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
        "WHERE COALESCE(c.tid, 0) <> t.prev_tid ORDER BY t.zoid",
    .count_objects =
        "SELECT COUNT(*) FROM current_object c "
        "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid WHERE s.state IS NOT NULL",
    .count_transactions = "SELECT COUNT(*) FROM \"transaction\" WHERE tid > 0",
    .iter_transactions =
        "SELECT tid, packed, username, description, extension FROM \"transaction\" "
        "WHERE tid > 0 AND tid >= ? AND tid <= ? ORDER BY tid",
};

}  // namespace

const Queries& queries(bool keep_history) {
  return keep_history ? kHistoryPreserving : kHistoryFree;
}

Tid newest_finished_tid(Db& db, bool keep_history, bool has_deletion_mark) {
  const Tid rows = Tid::from_sql(db.query_int(queries(keep_history).last_tid));
  if (!has_deletion_mark) return rows;
  return backend::last_finished(rows, Tid::from_sql(db.query_int(kDeletionMark)));
}

}  // namespace relstore::sqlite
