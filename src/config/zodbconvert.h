// zodbconvert-style configuration: a `source` and a `destination` storage section.
#pragma once

#include <string>
#include <vector>

#include "config/zconfig.h"
#include "relstore/uri.h"

namespace relstore {

struct StorageEndpoint {
  StorageUri uri;
  std::string blob_dir;  // empty when the section names none
};

struct ZodbconvertConfig {
  StorageEndpoint source;
  StorageEndpoint destination;
  std::vector<std::string> warnings;  // ignored options and imports, for the log
};

// Reads the file zodbconvert's --config names. Throws ConfigError naming file and line.
ZodbconvertConfig read_zodbconvert_config(const std::string& path);
ZodbconvertConfig zodbconvert_config_from_text(std::string_view text, const std::string& filename);

// One storage section (<filestorage>, <relstorage> with <postgresql>/<mysql>/<sqlite3>).
StorageEndpoint endpoint_from_section(const ZConfigSection& section, const std::string& filename,
                                      std::vector<std::string>& warnings);

// Turns a libpq connection string ("dbname=x user=y password='z'" or a postgresql:// URI)
// into a StorageUri; unknown libpq keys become driver parameters.
StorageUri uri_from_libpq_dsn(const std::string& dsn);

}  // namespace relstore
