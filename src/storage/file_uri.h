// The options a file: URI takes, checked alike wherever one is opened.
#pragma once

#include <string>

#include "relstore/uri.h"

namespace relstore {

// Throws ConfigError for history=free (a Data.fs always keeps history) and for options a
// file: URI does not take (`write` and `fsync` are its own), which would otherwise be
// ignored.
void check_file_uri_options(const StorageOptions& options);
// A yes/no driver option (`write`, `fsync`, `immutable`): `fallback` when not given.
bool driver_flag(const StorageOptions& options, const std::string& key, bool fallback);

}  // namespace relstore
