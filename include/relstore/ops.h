// Library functions behind the `relstore` command line (tools/ is a thin layer over these).
#pragma once

#include <string>

#include "relstore/storage.h"

namespace relstore {

// Opens `uri` read-only without creating anything and returns its facts. Throws
// ConfigError for a bad URI, SchemaError when there is no usable database.
StorageInfo inspect_storage(const std::string& uri);

// `relstore info` output: aligned "key value" lines, or one JSON object.
std::string format_info(const StorageInfo& info, const std::string& redacted_uri, bool json);

// Bytes as "1.2 MiB".
std::string human_bytes(uint64_t bytes);

}  // namespace relstore
