// Paths as names of databases.
#pragma once

#include <filesystem>
#include <string>

namespace relstore {

// `path` with symbolic links, "." and ".." resolved and made absolute, so that two
// spellings of one file compare equal; the path as given when it cannot be resolved.
inline std::string canonical_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// Storage::identity of a database that is a file or directory: the scheme and the path.
inline std::string path_identity(const std::string& scheme, const std::string& path) {
  return scheme + " " + canonical_path(path);
}

}  // namespace relstore
