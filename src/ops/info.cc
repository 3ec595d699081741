#include <cstdio>
#include <nlohmann/json.hpp>

#include "ops/open_read_only.h"
#include "relstore/ops.h"
#include "relstore/timestamp.h"

namespace relstore {

StorageInfo inspect_storage(const std::string& uri) {
  auto storage = open_read_only(uri);
  StorageInfo info = storage->info();
  storage->close();
  return info;
}

std::string human_bytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string format_info(const StorageInfo& info, const std::string& redacted_uri, bool json) {
  const std::string when = info.last_tid.is_zero() ? "" : TimeStamp(info.last_tid).str() + " UTC";
  if (json) {
    nlohmann::json j = {
        {"database", redacted_uri},
        {"backend", info.backend},
        {"history", info.keep_history ? "preserving" : "free"},
        {"schema_version", info.schema_version},
        {"objects", info.objects},
        {"transactions", info.transactions},
        {"size_bytes", info.size_bytes},
        {"last_tid", info.last_tid.hex()},
        {"last_tid_time", when.empty() ? nlohmann::json() : nlohmann::json(when)},
        {"unfinished_conversion", nlohmann::json()},
    };
    if (const auto& c = info.unfinished_conversion) {
      j["unfinished_conversion"] = {{"source", c->source}, {"started_at", c->started_at}};
    }
    return j.dump(2) + "\n";
  }
  std::string out;
  auto line = [&](const char* key, const std::string& value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-14s", key);
    out += buf + value + "\n";
  };
  line("database", redacted_uri);
  line("backend", info.backend);
  line("history", info.keep_history ? "preserving" : "free");
  line("schema", info.schema_version);
  line("objects", std::to_string(info.objects));
  line("transactions", std::to_string(info.transactions));
  // A Data.fs reports its length, headers included; databases their states' bytes.
  line("size", human_bytes(info.size_bytes) + " (" + std::to_string(info.size_bytes) +
                   (info.backend == "file" ? " bytes of file)" : " bytes of object state)"));
  line("last TID",
       info.last_tid.is_zero() ? "none (empty database)" : info.last_tid.hex() + " (" + when + ")");
  if (const auto& c = info.unfinished_conversion) {
    line("INCOMPLETE", "a conversion from " + c->source + " started " + c->started_at +
                           " did not finish: this holds part of it (`relstore convert "
                           "--incremental` continues it)");
  }
  return out;
}

}  // namespace relstore
