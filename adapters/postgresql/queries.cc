#include "adapters/postgresql/queries.h"

namespace relstore::postgresql {
namespace {

const Queries kHistoryFree = {
    .last_tid = {"last_tid", "SELECT MAX(tid) FROM object_state"},
    .poll = {"poll", "SELECT zoid, tid FROM object_state WHERE tid > $1"},
    .load_current = {"load_current", "SELECT tid, state FROM object_state WHERE zoid = $1"},
    .load_before = {"load_before",
                    "SELECT tid, state, NULL::bigint FROM object_state "
                    "WHERE zoid = $1 AND tid < $2"},
    .history = {"history",
                "SELECT tid, state_size, ''::bytea, ''::bytea, ''::bytea FROM object_state "
                "WHERE zoid = $1 LIMIT $2"},
    .current_records = {"current_records",
                        "SELECT zoid, tid, state FROM object_state "
                        "WHERE zoid >= $1 AND state IS NOT NULL ORDER BY zoid LIMIT $2"},
    .records_before = {"records_before",
                       "SELECT zoid, tid, state FROM object_state WHERE zoid >= $1 AND tid < $2 "
                       "AND state IS NOT NULL "
                       "ORDER BY zoid LIMIT $3"},
    .iter_transactions = {"iter_transactions",
                          "SELECT DISTINCT tid, false, ''::bytea, ''::bytea, ''::bytea "
                          "FROM object_state WHERE tid > $1 AND tid <= $2 ORDER BY tid LIMIT $3"},
    .count_objects = "SELECT COUNT(*) FROM object_state WHERE state IS NOT NULL",
    .count_transactions = "SELECT COUNT(DISTINCT tid) FROM object_state",
};

const Queries kHistoryPreserving = {
    .last_tid = {"last_tid", "SELECT MAX(tid) FROM \"transaction\""},
    .poll = {"poll", "SELECT zoid, tid FROM current_object WHERE tid > $1"},
    .load_current = {"load_current",
                     "SELECT c.tid, s.state FROM current_object c "
                     "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
                     "WHERE c.zoid = $1"},
    .load_before = {"load_before",
                    "SELECT o.tid, o.state, (SELECT MIN(n.tid) FROM object_state n "
                    "WHERE n.zoid = o.zoid AND n.tid > o.tid) "
                    "FROM object_state o WHERE o.zoid = $1 AND o.tid < $2 "
                    "ORDER BY o.tid DESC LIMIT 1"},
    .history = {"history",
                "SELECT s.tid, s.state_size, t.username, t.description, "
                "COALESCE(t.extension, ''::bytea) "
                "FROM object_state s JOIN \"transaction\" t ON t.tid = s.tid "
                "WHERE s.zoid = $1 ORDER BY s.tid DESC LIMIT $2"},
    .current_records =
        {"current_records",
         "SELECT c.zoid, c.tid, s.state FROM current_object c "
         "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid "
         "WHERE c.zoid >= $1 AND s.zoid >= $1 AND s.state IS NOT NULL ORDER BY c.zoid LIMIT $2"},
    .records_before =
        {"records_before",
         "SELECT s.zoid, s.tid, s.state FROM object_state s WHERE s.zoid >= $1 "
         "AND s.tid = (SELECT MAX(n.tid) FROM object_state n WHERE n.zoid = s.zoid AND n.tid < $2) "
         "AND s.state IS NOT NULL ORDER BY s.zoid LIMIT $3"},
    .iter_transactions = {"iter_transactions",
                          "SELECT tid, packed, username, description, "
                          "COALESCE(extension, ''::bytea) FROM \"transaction\" "
                          "WHERE tid > 0 AND tid > $1 AND tid <= $2 ORDER BY tid LIMIT $3"},
    .count_objects =
        "SELECT COUNT(*) FROM current_object c "
        "JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid WHERE s.state IS NOT NULL",
    .count_transactions = "SELECT COUNT(*) FROM \"transaction\" WHERE tid > 0",
};

}  // namespace

const Queries& queries(bool keep_history) {
  return keep_history ? kHistoryPreserving : kHistoryFree;
}

}  // namespace relstore::postgresql
