// `relstore verify`'s check of a history-preserving schema (design.md §8): every object's
// current_object row must name the newest revision object_state has of it. A row that is
// missing, names a revision that is not there, or an older one makes loads read the wrong
// state (or raise POSKeyError) while the history looks whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "relstore/types.h"

namespace relstore::backend {

inline constexpr size_t kFaultsListed = 20;

struct CurrentFaults {
  uint64_t count = 0;
  std::vector<Oid> oids;  // the first kFaultsListed, ascending
};

// Rows of (zoid, count of all faults), ordered by zoid, the first kFaultsListed. Plain SQL
// that SQLite, PostgreSQL and MariaDB/MySQL all run (window functions: SQLite 3.25,
// MariaDB 10.2, MySQL 8). Built once so that its address is stable (SQLite's statement
// cache is keyed by it).
inline const std::string kCurrentFaultsSql =
    "SELECT zoid, COUNT(*) OVER () FROM ("
    " SELECT c.zoid FROM current_object c"
    " LEFT JOIN object_state s ON s.zoid = c.zoid AND s.tid = c.tid"
    " WHERE s.zoid IS NULL"
    " UNION"
    " SELECT n.zoid FROM (SELECT zoid, MAX(tid) AS tid FROM object_state GROUP BY zoid) n"
    " LEFT JOIN current_object c ON c.zoid = n.zoid"
    " WHERE c.zoid IS NULL OR c.tid <> n.tid"
    ") f ORDER BY zoid LIMIT " +
    std::to_string(kFaultsListed);

}  // namespace relstore::backend
