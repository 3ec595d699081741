#include "convert/scratch_dir.h"

#include <stdlib.h>

#include <filesystem>

#include "relstore/errors.h"

namespace relstore {

ScratchDir::ScratchDir() {
  std::error_code ec;
  std::string pattern =
      (std::filesystem::temp_directory_path(ec) / "relstore-convert-XXXXXX").string();
  if (ec || !mkdtemp(pattern.data())) {
    throw StorageError("cannot create a temporary directory " + pattern +
                       " (for blob contents; TMPDIR chooses where)");
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  // Blob files are read-only, which their directories' permissions do not stop removing.
  std::filesystem::remove_all(path_, ec);
}

}  // namespace relstore
