// `relstore pack`: zodbpack for relstore's databases.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "relstore/clock.h"
#include "relstore/errors.h"
#include "relstore/ops.h"
#include "relstore/timestamp.h"

namespace relstore {

namespace {
// 1900-01-01T00:00:00Z in Unix time: TimeStamps count from there.
constexpr double kTidEpochUnix = -2208988800.0;
}  // namespace

PackResult pack_storage(const std::string& uri, double days, PackOptions options) {
  const auto storage = open_storage(uri);
  if (!std::isfinite(days) || days < 0) {
    throw ConfigError("--days: a number of days of 0 or more, not " + std::to_string(days));
  }
  // Before 1900, where TIDs begin: keep everything (TID 1 is before any transaction).
  const double when = system_clock()->now() - days * 86400.0;
  options.pack_tid = when < kTidEpochUnix ? Tid(1) : TimeStamp::from_unix(when).tid();
  const PackResult result = storage->pack(options);
  storage->close();
  return result;
}

std::string format_pack_result(const PackResult& r, bool json) {
  const std::string when = r.pack_tid.is_zero() ? "" : TimeStamp(r.pack_tid).str() + " UTC";
  if (json) {
    const nlohmann::json j = {
        {"pack_tid", r.pack_tid.hex()},
        {"pack_time", when.empty() ? nlohmann::json() : nlohmann::json(when)},
        {"objects_removed", r.objects_removed},
        {"revisions_removed", r.revisions_removed},
        {"transactions_removed", r.transactions_removed},
        {"objects_locked", r.objects_locked},
        {"prepack_only", r.prepack_only},
    };
    return j.dump(2) + "\n";
  }
  if (r.pack_tid.is_zero()) return "nothing to pack: the database is empty\n";
  if (r.prepack_only) {
    return "a pack to " + r.pack_tid.hex() + " (" + when + ") would remove " +
           std::to_string(r.objects_removed) + " objects, " + std::to_string(r.revisions_removed) +
           " old revisions and " + std::to_string(r.transactions_removed) +
           " transactions; nothing was removed (--prepack-only)\n";
  }
  std::string out = "packed to " + r.pack_tid.hex() + " (" + when +
                    "): " + std::to_string(r.objects_removed) + " objects, " +
                    std::to_string(r.revisions_removed) + " old revisions and " +
                    std::to_string(r.transactions_removed) + " transactions removed\n";
  if (r.objects_locked > 0) {
    out += std::to_string(r.objects_locked) +
           " unreachable objects were kept: another transaction held them locked or had just "
           "changed them (the next pack looks at them again)\n";
  }
  return out;
}

}  // namespace relstore
