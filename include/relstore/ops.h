// Library functions behind the `relstore` command line (tools/ is a thin layer over these).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "relstore/storage.h"

namespace relstore {

// Opens `uri` read-only without creating anything and returns its facts. Throws
// ConfigError for a bad URI, SchemaError when there is no usable database.
StorageInfo inspect_storage(const std::string& uri);

// `relstore info` output: aligned "key value" lines, or one JSON object.
std::string format_info(const StorageInfo& info, const std::string& redacted_uri, bool json);

struct MigrationStatus {
  std::string backend;
  std::vector<int> applied;                          // versions in relstore_schema
  std::vector<std::pair<int, std::string>> pending;  // (version, name), ascending
  int newest = 0;
  bool has_schema = false;  // a schema is there (relstore's or RelStorage's own)
};

// `relstore migrate status`: reads only.
MigrationStatus migration_status(const std::string& uri);
std::string format_migration_status(const MigrationStatus& status);
// `relstore migrate up`: applies pending migrations in order and returns their file names
// ("0002_name"); with `dry_run` lists them and changes nothing.
std::vector<std::string> migrate_up(const std::string& uri, bool dry_run);

// `relstore pack`: opens `uri` and packs it to `days` days before now (docs/operations.md,
// "Packing"); with `gc`, unreachable objects go too.
PackResult pack_storage(const std::string& uri, double days, bool gc);
// Its report: a line or two, or one JSON object.
std::string format_pack_result(const PackResult& result, bool json);

// Bytes as "1.2 MiB".
std::string human_bytes(uint64_t bytes);

}  // namespace relstore
