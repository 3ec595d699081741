// Library functions behind the `relstore` command line (tools/ is a thin layer over these).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "relstore/json_mirror.h"
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
// "Packing"); `options.gc`, `prepack_only` and `check_refs` as given (its pack_tid is
// replaced).
PackResult pack_storage(const std::string& uri, double days, PackOptions options);
// Its report: a line or two, or one JSON object.
std::string format_pack_result(const PackResult& result, bool json);

// `relstore verify`: what reading every current object found.
inline constexpr size_t kVerifyListed = 20;  // dangling references and oids listed at most
struct VerifyReport {
  uint64_t objects = 0;
  uint64_t references = 0;  // strong references, counted per referencing object
  bool has_root = false;    // oid 0 exists
  // References to objects that do not exist: (from, to), the first kVerifyListed.
  uint64_t dangling = 0;
  std::vector<std::pair<Oid, Oid>> dangling_refs;
  uint64_t unreachable = 0;  // with a root: objects it does not reach (garbage)
  // Records whose references the scanner cannot read (not checked), the first listed.
  uint64_t unreadable = 0;
  std::vector<Oid> unreadable_oids;
  // History-preserving databases: objects whose current_object row is missing, names a
  // revision object_state does not have, or an older one than the newest; the first listed.
  bool current_checked = false;
  uint64_t current_faults = 0;
  std::vector<Oid> current_fault_oids;
  // The JSON mirror of a database that has its tables; otherwise why it was not checked.
  std::optional<MirrorStatus> mirror;
  std::string mirror_unchecked;
  // An in-commit mirror must equal the data: anything pending or orphaned is a fault. A
  // follow-mode mirror may trail (its lag is reported, not judged).
  bool mirror_behind() const {
    return mirror && mirror->mode == MirrorMode::in_commit &&
           (mirror->pending > 0 || mirror->orphaned > 0);
  }
  // No dangling references, a root unless the database is empty, current_object in step
  // with object_state, and an in-commit mirror in step with the data.
  bool ok() const {
    return dangling == 0 && (has_root || objects == 0) && current_faults == 0 && !mirror_behind();
  }
};
// Opens `uri` read-only (creating nothing) and reads every current object in one snapshot.
VerifyReport verify_storage(const std::string& uri);
// Its report: lines ending in "ok" or "FAILED", or one JSON object.
std::string format_verify_report(const VerifyReport& report, bool json);

// Bytes as "1.2 MiB".
std::string human_bytes(uint64_t bytes);

}  // namespace relstore
