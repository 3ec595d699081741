// Current records in OID order. OIDs are unsigned 64-bit, SQL keeps them in signed
// BIGINTs: those of 2**63 and above are negative there, sort before the others, and
// "zoid >= from" of a negative `from` reaches the others too. So the low OIDs come first,
// then the high ones, each query trimmed to the half it asked for.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "backend/adapter.h"

namespace relstore::backend {

// Up to `limit` current records of the connection's snapshot with OIDs >= `from`, in
// ascending (unsigned) OID order; with `before`, those current just before that TID.
inline std::vector<std::pair<Oid, StateRow>> current_records_in_oid_order(
    LoadConnection& conn, Oid from, size_t limit, std::optional<Tid> before = std::nullopt) {
  constexpr uint64_t kHigh = uint64_t{1} << 63;
  auto keep_high = [](std::vector<std::pair<Oid, StateRow>>& found) {
    std::erase_if(found, [](const auto& row) { return row.first.value() < kHigh; });
  };
  auto rows = conn.current_records(from, before, limit);
  if (from.value() >= kHigh) {
    keep_high(rows);
  } else if (rows.size() < limit) {
    auto high = conn.current_records(Oid(kHigh), before, limit - rows.size());
    keep_high(high);
    for (auto& row : high) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace relstore::backend
