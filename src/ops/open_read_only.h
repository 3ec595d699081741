// How the inspecting commands (info, verify) open a database: read-only, creating
// nothing, without a state cache (each object is read once).
#pragma once

#include <memory>
#include <string>

#include "relstore/storage.h"

namespace relstore {

inline std::unique_ptr<Storage> open_read_only(const std::string& uri) {
  const StorageUri parsed = StorageUri::parse(uri);
  StorageOptions options = parsed.options();
  options.read_only = true;
  options.create = false;
  options.cache_mb = 0;
  return open_storage(parsed, options);
}

}  // namespace relstore
